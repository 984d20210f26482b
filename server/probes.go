package server

import (
	"context"
	"net/http"
	"time"
)

// Probes for a load balancer or an orchestrator, served without a bearer
// token and without any data ([FrontDoorOptions].Probes):
//
//   - /healthz answers 200 while the process serves (alive);
//   - /readyz answers 200 when it can take work: not draining, and
//     ready() (what cmd knows: Redis reachable, upstreams started) says
//     so; else 503 with the reason, one line.
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
)

// readyWait bounds one readiness check (a Redis ping).
const readyWait = 2 * time.Second

// Probes returns the handler of [HealthPath] and [ReadyPath]. ready may
// be nil (nothing but the drain to check).
func (s *Server) Probes(ready func(ctx context.Context) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path {
		case HealthPath:
			http.Error(w, "ok", http.StatusOK)
		case ReadyPath:
			if s.Draining() {
				http.Error(w, "not ready: shutting down", http.StatusServiceUnavailable)
				return
			}
			if ready != nil {
				ctx, cancel := context.WithTimeout(r.Context(), readyWait)
				defer cancel()
				if err := ready(ctx); err != nil {
					http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
					return
				}
			}
			http.Error(w, "ready", http.StatusOK)
		default:
			http.NotFound(w, r)
		}
	})
}
