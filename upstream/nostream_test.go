package upstream

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// lockedBuffer is a log sink the connection's goroutines write to while
// the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHTTPNoListeningStream (issue 38 item 10): a stateless server
// without a GET stream that answers 404 with an HTML page, or 405, is a
// server with no listening stream: the GET is not retried, and that is
// said once, at INFO, without the page.
func TestHTTPNoListeningStream(t *testing.T) {
	const page = "<html><body><h1>Not Found</h1></body></html>"
	for _, tc := range []struct {
		name   string
		status int
	}{
		{"404 with an HTML page", http.StatusNotFound},
		{"405", http.StatusMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gets atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					gets.Add(1)
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(tc.status)
					io.WriteString(w, page)
					return
				}
				var m rpcMessage
				b, _ := io.ReadAll(r.Body)
				if json.Unmarshal(b, &m) != nil || len(m.ID) == 0 {
					w.WriteHeader(http.StatusAccepted) // a notification
					return
				}
				reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
				switch m.Method {
				case "initialize":
					reply["result"] = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "nostream", "version": "1"}}
				case "tools/list":
					reply["result"] = map[string]any{"tools": []any{}}
				default:
					reply["error"] = map[string]any{"code": -32601, "message": "method not found"}
				}
				writeJSON(w, reply) // no Mcp-Session-Id: stateless
			}))
			t.Cleanup(srv.Close)
			var logs lockedBuffer
			u := New(Options{
				Server: config.Server{Name: "nostream", Transport: config.TransportHTTPStreamable, URL: srv.URL + "/mcp",
					Timeout: 5 * time.Second, RestartMaxAttempts: 100, RestartBackoffMax: 100 * time.Millisecond},
				Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			})
			u.Start(t.Context(), nil)
			t.Cleanup(u.Close)
			testwait.For(t, "the GET", func() bool { return gets.Load() > 0 })
			// Before the fix the GET came again 2 s later (then 4, 8, …).
			time.Sleep(2500 * time.Millisecond)
			out := logs.String()
			if n := gets.Load(); n != 1 {
				t.Errorf("%d GETs, want 1 (no stream is not retried)\n%s", n, out)
			}
			var said []string
			for line := range strings.Lines(out) {
				if strings.Contains(line, "listening stream") {
					said = append(said, line)
				}
			}
			if len(said) != 1 || !strings.Contains(said[0], "level=INFO") || strings.Contains(out, "<html") {
				t.Errorf("want one INFO line about the stream, without the page; got:\n%s", out)
			}
		})
	}
}
