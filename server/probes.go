package server

import (
	"context"
	"net/http"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
)

// readyWait bounds one readiness check (a Redis ping).
const readyWait = 2 * time.Second

// Probes returns the handler of [frontdoor.HealthPath] and [frontdoor.ReadyPath]. ready may
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
		case frontdoor.HealthPath:
			http.Error(w, "ok", http.StatusOK)
		case frontdoor.ReadyPath:
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
