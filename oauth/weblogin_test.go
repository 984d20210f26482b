package oauth

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
)

// TestWebLoginTwoOwners: two owners of one server log in through the
// server's own callback, each with a URL of their own, and end up with
// two identities (two registered clients, two tokens in two stores).
func TestWebLoginTwoOwners(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	mux := http.NewServeMux()
	front := httptest.NewServer(mux)
	defer front.Close()
	web := NewWebLogins(front.URL + CallbackPath)
	mux.Handle(CallbackPath, web)
	store := &Store{Dir: t.TempDir()}
	sc := config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: srv.MCPURL(), Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}}
	client := func(owner string) *Client {
		return New(Options{Server: sc, Store: store, Owner: owner, Web: web, Logger: slog.New(slog.DiscardHandler)})
	}
	alice, bob := client("alice"), client("bob")

	loginURL := func(c *Client) string {
		t.Helper()
		_, err := c.Token(context.Background())
		var le *LoginError
		if !errors.As(err, &le) || le.URL == "" || !strings.Contains(err.Error(), "open "+le.URL) {
			t.Fatalf("Token before login: %v, want a LoginError with a URL", err)
		}
		if !strings.Contains(le.URL, "redirect_uri="+url.QueryEscape(front.URL+CallbackPath)) {
			t.Errorf("the login's redirect is not the server's callback: %s", le.URL)
		}
		return le.URL
	}
	ua, ub := loginURL(alice), loginURL(bob)
	if ua == ub {
		t.Fatal("two owners got the same login URL")
	}
	if again := loginURL(alice); again != ua {
		t.Error("a second call began a second login instead of handing out the pending one")
	}
	// A forged or stale state is refused.
	resp, err := http.Get(front.URL + CallbackPath + "?state=nope&code=x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown state: HTTP %d, want 400", resp.StatusCode)
	}

	for _, u := range []string{ua, ub} {
		if err := testoauth.Follow(u); err != nil {
			t.Fatal(err)
		}
	}
	who := func(c *Client) string {
		t.Helper()
		hc := &http.Client{Transport: c.Wrap(nil)}
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		req, _ := http.NewRequest(http.MethodPost, srv.MCPURL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("initialize after the web login: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: HTTP %d", resp.StatusCode)
		}
		rec, err := store.Load(c.opts.Owner, "remote")
		if err != nil {
			t.Fatal(err)
		}
		return rec.Client.ID
	}
	if a, b := who(alice), who(bob); a == b || a == "" {
		t.Errorf("alice and bob share the identity %q / %q", a, b)
	}
	for _, o := range []string{"alice", "bob"} {
		if _, err := os.Stat(filepath.Join(store.Dir, "owners", o, "remote.json")); err != nil {
			t.Errorf("%s's token: %v", o, err)
		}
	}
	if _, err := os.Stat(filepath.Join(store.Dir, "remote.json")); !os.IsNotExist(err) {
		t.Errorf("the user's own record was written: %v", err)
	}
	// The state was good once.
	if err := testoauth.Follow(ua); err == nil {
		t.Error("the same login URL completed twice")
	}
}
