package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/server"
)

// flushWatch is a response writer that notes whether anything reached
// the client yet (a flush) — the test's view of "the client has seen
// its stream open".
type flushWatch struct {
	http.ResponseWriter
	flushed atomic.Bool
}

func (w *flushWatch) Flush() {
	w.flushed.Store(true)
	w.ResponseWriter.(http.Flusher).Flush()
}

func (w *flushWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type watchKey struct{}

// TestStreamOpensOnceTaken: a POST's stream (its headers and prime
// event) reaches the client only once its requests are the session's. A
// client that sees the stream open may cancel the request at once on
// another POST; flushed before, that cancellation could reach go-sdk
// before the request, which it then ignored, and the call ran on
// unanswered (cmd's TestDuplicateInFlightIDRefused/http, 1 run in 25
// under load). The hook runs where the server hands the messages over:
// nothing of the response may have been flushed by then.
func TestStreamOpensOnceTaken(t *testing.T) {
	e := startEnv(t)
	var mu sync.Mutex
	var early []string
	server.OnHTTPPush(t, func(r *http.Request) {
		if w, _ := r.Context().Value(watchKey{}).(*flushWatch); w != nil && w.flushed.Load() {
			mu.Lock()
			early = append(early, r.Header.Get("X-Call"))
			mu.Unlock()
		}
	})
	h := e.srv.StreamableHTTP(server.StreamableHTTPOptions{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fw := &flushWatch{ResponseWriter: w}
		h.ServeHTTP(fw, r.WithContext(context.WithValue(r.Context(), watchKey{}, fw)))
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	session := ""
	post := func(name, body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("X-Call", name)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			session = s
		}
		var prime, data string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			l := sc.Text()
			if l == "event: prime" {
				prime = l
			}
			if d, ok := strings.CutPrefix(l, "data: "); ok && strings.Contains(d, `"id"`) {
				data = d
				break
			}
		}
		if prime == "" && name != "initialized" {
			t.Errorf("%s: no prime event (the case this test is about)", name)
		}
		return data
	}
	post("initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	for _, c := range []string{"ping", "tools/list"} {
		if got := post(c, `{"jsonrpc":"2.0","id":2,"method":"`+c+`"}`); !strings.Contains(got, `"result"`) {
			t.Errorf("%s answered %.200s", c, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Errorf("these POSTs' streams reached the client before their requests were the session's: %v", early)
	}
}
