package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
)

// TestSessionOfAnotherOwnerDoesNotExist: a request naming a session that
// another owner's request created is answered as for an unknown session.
func TestSessionOfAnotherOwnerDoesNotExist(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	px := proxy.New(proxy.Options{Logger: log})
	srv := New(Options{Proxy: px, Logger: log,
		Session: func(SessionInfo) (*Own, error) { return &Own{}, nil }})
	// The owner a front door would have put in the request's Caller.
	streamable := srv.StreamableHTTP(StreamableHTTPOptions{})
	h := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		streamable.ServeHTTP(w, r.WithContext(frontdoor.WithCaller(r.Context(), frontdoor.Caller{Owner: r.Header.Get("X-Test-Owner")})))
	}))
	defer h.Close()
	post := func(owner, session, body string) *http.Response {
		req := postRequest(h.URL, session, body)
		req.Header.Set("X-Test-Owner", owner)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("no session: %s", resp.Status)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	unknown := post("bob", "NOSUCHSESSION", list).StatusCode
	if got := post("bob", sid, list).StatusCode; got != unknown || got != http.StatusNotFound {
		t.Errorf("bob naming alice's session: %d, unknown session: %d; want both 404", got, unknown)
	}
	if got := post("alice", sid, list).StatusCode; got != http.StatusOK {
		t.Errorf("alice's own session: %d", got)
	}
}
