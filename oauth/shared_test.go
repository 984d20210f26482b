package oauth

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// slowTokens holds every request to the token endpoint for a while before
// sending it: two replicas that refresh without waiting for each other
// then both reach the endpoint, whatever the scheduling.
type slowTokens struct{ next http.RoundTripper }

func (s slowTokens) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/token") {
		time.Sleep(300 * time.Millisecond) // the overlap the test needs, not a wait for an event
	}
	return s.next.RoundTrip(req)
}

// replica is a Client on its own token directory (its own host) and its
// own connection to the shared Redis.
func replica(t *testing.T, srv *testoauth.Server, redisURL string, clk *clock, dir string) (*Client, *state.Redis) {
	t.Helper()
	return replicaWith(t, srv, redisURL, clk, dir, config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode})
}

func replicaWith(t *testing.T, srv *testoauth.Server, redisURL string, clk *clock, dir string, auth config.Auth) (*Client, *state.Redis) {
	t.Helper()
	r, err := state.NewRedis(state.RedisOptions{URL: redisURL, Prefix: "t", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return New(Options{
		Server:     config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: srv.MCPURL(), Auth: &auth},
		Store:      &Store{Dir: dir, Shared: r},
		Logger:     slog.New(slog.DiscardHandler),
		Now:        clk.Now,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: slowTokens{http.DefaultTransport}},
	}), r
}

// copyKey gives dst the sealing key of src, as an operator does for a
// replica on another host.
func copyKey(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(src, layout.OAuthSealKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, layout.OAuthSealKeyFile), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSharedTokens: two replicas on one Redis. A token A's login saved is
// B's; when both need a refresh at once exactly one refresh reaches the
// token endpoint and both use its token; Redis holds the record sealed.
func TestSharedTokens(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{TTL: time.Hour})
	rs := testredis.Start(t)
	clk := &clock{now: time.Now()}
	dirA, dirB := t.TempDir(), t.TempDir()
	a, ra := replica(t, srv, rs.URL(), clk, dirA)
	login(t, a)
	copyKey(t, dirA, dirB)
	b, _ := replica(t, srv, rs.URL(), clk, dirB)
	ctx := context.Background()

	first, err := a.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b.Token(ctx); err != nil || got != first {
		t.Fatalf("replica B's token: %v (same as A's: %v); want A's", err, got == first)
	}
	if code, err := initialize(t, b); err != nil || code != http.StatusOK {
		t.Fatalf("replica B calls with A's token: %d, %v", code, err)
	}

	// Both near expiry at once.
	clk.Add(time.Hour - 10*time.Second)
	before := srv.RefreshAttempts.Load()
	var wg sync.WaitGroup
	var toks [2]string
	var errs [2]error
	start := make(chan struct{})
	for i, c := range []*Client{a, b} {
		wg.Go(func() {
			<-start
			toks[i], errs[i] = c.Token(ctx)
		})
	}
	close(start)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("Token during a shared refresh: A %v, B %v", errs[0], errs[1])
	}
	if n := srv.RefreshAttempts.Load() - before; n != 1 {
		t.Errorf("refresh requests at the token endpoint: %d, want 1", n)
	}
	if toks[0] != toks[1] || toks[0] == first {
		t.Errorf("after the refresh: A and B same token %v, changed %v; want the one new token for both", toks[0] == toks[1], toks[0] != first)
	}
	if code, err := initialize(t, a); err != nil || code != http.StatusOK {
		t.Errorf("replica A after the refresh: %d, %v", code, err)
	}

	// What Redis holds: no token in the clear, and a record moved to
	// another name (another owner) does not open there.
	raw, err := ra.GetValue(ctx, layout.OAuthRecordName("", "remote"))
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := a.opts.Store.Load(ctx, "", "remote")
	for _, secret := range []string{rec.Token.AccessToken, rec.Token.RefreshToken, rec.Client.ID} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the record on Redis shows a secret in the clear")
		}
	}
	if err := ra.PutValue(ctx, layout.OAuthRecordName("mallory", "remote"), raw, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.opts.Store.Load(ctx, "mallory", "remote"); !errors.Is(err, ErrSealKey) {
		t.Errorf("a record moved to another owner: %v, want ErrSealKey", err)
	}
	if fi, err := os.Stat(filepath.Join(dirA, layout.OAuthSealKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the sealing key file: %v, %v; want mode 0600", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dirA, "remote.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a token file in the directory in replica mode: %v", err)
	}

	// B logs out: A is logged out too.
	if had, err := b.Logout(ctx); err != nil || !had {
		t.Fatalf("Logout on B: %v, %v", had, err)
	}
	if _, err := a.Token(ctx); !errors.Is(err, ErrLoginRequired) {
		t.Errorf("A after B's logout: %v, want ErrLoginRequired", err)
	}
}

// TestSharedClientCredentials: two replicas of a client_credentials
// upstream with no token yet, asking at once: one token request reaches
// the endpoint, both use its token.
func TestSharedClientCredentials(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{ClientID: "svc", ClientSecret: "s3cret", NoRegistration: true})
	rs := testredis.Start(t)
	clk := &clock{now: time.Now()}
	dirA, dirB := t.TempDir(), t.TempDir()
	auth := config.Auth{Type: config.AuthOAuth, Grant: config.GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"}
	a, _ := replicaWith(t, srv, rs.URL(), clk, dirA, auth)
	if _, err := a.opts.Store.sealer(false); err != nil { // the key, made before B copies it
		t.Fatal(err)
	}
	copyKey(t, dirA, dirB)
	b, _ := replicaWith(t, srv, rs.URL(), clk, dirB, auth)
	var wg sync.WaitGroup
	var toks [2]string
	var errs [2]error
	start := make(chan struct{})
	for i, c := range []*Client{a, b} {
		wg.Go(func() {
			<-start
			toks[i], errs[i] = c.Token(context.Background())
		})
	}
	close(start)
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || toks[0] != toks[1] {
		t.Fatalf("A %v, B %v, same token %v", errs[0], errs[1], toks[0] == toks[1])
	}
	if n := srv.ClientCredentials.Load(); n != 1 {
		t.Errorf("client_credentials requests: %d, want 1", n)
	}
}

// TestSharedTokensOtherKey: a replica whose key file is not the one the
// record was sealed with says so, naming the file; once the right key is
// copied in it reads the record without a restart.
func TestSharedTokensOtherKey(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	rs := testredis.Start(t)
	clk := &clock{now: time.Now()}
	dirA, dirC := t.TempDir(), t.TempDir()
	a, _ := replica(t, srv, rs.URL(), clk, dirA)
	login(t, a)
	c, _ := replica(t, srv, rs.URL(), clk, dirC)
	_, err := c.Token(context.Background())
	if !errors.Is(err, ErrSealKey) || !strings.Contains(err.Error(), filepath.Join(dirC, layout.OAuthSealKeyFile)) || errors.Is(err, ErrLoginRequired) {
		t.Fatalf("a replica with another key: %v; want ErrSealKey naming its key file", err)
	}
	copyKey(t, dirA, dirC)
	if _, err := c.Token(context.Background()); err != nil {
		t.Errorf("after the key was copied: %v", err)
	}
}

// TestSharedTokensRedisDown: without Redis a call fails with an error
// naming [cluster] redis_url, not a login request; it works again when
// Redis is back (an empty one here: the login is then needed again).
func TestSharedTokensRedisDown(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	rs := testredis.Start(t)
	clk := &clock{now: time.Now()}
	a, _ := replica(t, srv, rs.URL(), clk, t.TempDir())
	login(t, a)
	rs.Kill()
	for what, err := range map[string]error{
		"token":     func() error { _, err := a.Token(context.Background()); return err }(),
		"call":      func() error { _, err := initialize(t, a); return err }(),
		"status":    func() error { _, err := a.Status(); return err }(),
		"after 401": func() error { _, err := a.refused(context.Background(), "old"); return err }(),
	} {
		if !errors.Is(err, state.ErrUnavailable) || !strings.Contains(err.Error(), "[cluster] redis_url") || errors.Is(err, ErrLoginRequired) {
			t.Errorf("%s with Redis down: %v; want state.ErrUnavailable naming [cluster] redis_url", what, err)
		}
		t.Logf("%s with Redis down: %v", what, err)
	}
	rs.Restart()
	if _, err := a.Token(context.Background()); !errors.Is(err, ErrLoginRequired) {
		t.Errorf("with an empty Redis back: %v, want ErrLoginRequired", err)
	}
}

// BenchmarkToken is what a request pays for its token with a fresh one
// stored: a stat of the file, or a GET and an AES-GCM open on Redis.
func BenchmarkToken(b *testing.B) {
	srv := testoauth.New(b, testoauth.Options{})
	rs := testredis.Start(b)
	for _, shared := range []bool{false, true} {
		name := map[bool]string{false: "file", true: "redis"}[shared]
		b.Run(name, func(b *testing.B) {
			r, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "b" + name})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			st := &Store{Dir: b.TempDir()}
			if shared {
				st.Shared = r
			}
			auth := config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}
			c := New(Options{Server: config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: srv.MCPURL(), Auth: &auth},
				Store: st, Logger: slog.New(slog.DiscardHandler)})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := c.Login(ctx, LoginOptions{Open: testoauth.Follow}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Token(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSealKeyCreatedOnce: processes starting at once on one token
// directory end with one key, never each its own.
func TestSealKeyCreatedOnce(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), layout.OAuthSealKeyFile)
		const n = 8
		ids := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				k, err := loadSealKey(path)
				if err == nil {
					ids[i] = k.id
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil || ids[i] != ids[0] {
				t.Fatalf("round %d: process %d: key %s, %v; process 0: %s", round, i, ids[i], errs[i], ids[0])
			}
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*tmp*")); len(left) > 0 {
			t.Fatalf("round %d: temporary files left: %v", round, left)
		}
	}
}
