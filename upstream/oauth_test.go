package upstream

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// TestOAuthUpstream runs an upstream behind a real authorization server
// over both remote transports: a call before any login fails at once
// naming `auth login`; after the login the upstream connects by itself;
// a token the server expires mid-session is refreshed without losing the
// call; a revoked grant fails the call with the login error, and a new
// login heals the same connection.
func TestOAuthUpstream(t *testing.T) {
	for _, transport := range []string{config.TransportHTTPStreamable, config.TransportSSE} {
		t.Run(transport, func(t *testing.T) {
			srv := testoauth.New(t, testoauth.Options{})
			url := srv.MCPURL()
			if transport == config.TransportSSE {
				url = srv.SSEURL()
			}
			sc := config.Server{Name: "remote", Transport: transport, URL: url, Timeout: 20 * time.Second,
				Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}}
			oc := oauth.New(oauth.Options{Server: sc, Store: &oauth.Store{Dir: t.TempDir()}, Logger: quietLogger(),
				LoginCommand: "scratchpad-mcp auth login --config x.toml remote"})
			u := New(Options{Server: sc, Logger: quietLogger(), ClientName: "t", ClientVersion: "1", Auth: oc})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			u.Start(ctx, nil)
			defer u.Close()

			call := func() (string, error) {
				cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
				defer ccancel()
				res, err := u.Call(cctx, "tools/call", map[string]any{"name": "whoami"})
				return string(res), err
			}
			_, err := call()
			le, ok := LoginError(err)
			if !errors.Is(err, oauth.ErrLoginRequired) || !ok || !strings.Contains(le.Error(), "auth login --config x.toml remote") {
				t.Fatalf("call before login: %v, want ErrLoginRequired naming the command", err)
			}

			lctx, lcancel := context.WithTimeout(ctx, 20*time.Second)
			defer lcancel()
			if err := oc.Login(lctx, oauth.LoginOptions{Open: testoauth.Follow}); err != nil {
				t.Fatal(err)
			}
			waitReady(t, u)
			if res, err := call(); err != nil || !strings.Contains(res, "hello") {
				t.Fatalf("call after login: %s, %v", res, err)
			}

			srv.ExpireAccess()
			if res, err := call(); err != nil || !strings.Contains(res, "hello") {
				t.Fatalf("call after the server expired the token: %s, %v", res, err)
			}
			if srv.Refreshes.Load() < 1 {
				t.Error("no refresh happened")
			}

			srv.RevokeAll()
			_, err = call()
			if !errors.Is(err, oauth.ErrLoginRequired) {
				t.Fatalf("call after revocation: %v, want ErrLoginRequired", err)
			}
			if err := oc.Login(lctx, oauth.LoginOptions{Open: testoauth.Follow}); err != nil {
				t.Fatal(err)
			}
			waitReady(t, u)
			if res, err := call(); err != nil || !strings.Contains(res, "hello") {
				t.Fatalf("call after the new login: %s, %v", res, err)
			}
		})
	}
}

// waitReady waits, bounded, until u is connected.
func waitReady(t *testing.T, u *Upstream) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := u.State()
		if st == StateReady {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream not ready: %s, %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
