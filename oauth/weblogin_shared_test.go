package oauth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// webReplica is one replica's logins through the server: its own token
// directory (the first replica's key copied in), its own connection to
// the shared Redis, its own WebLogins and clients.
type webReplica struct {
	name  string
	web   *WebLogins
	store *Store
	redis *state.Redis

	mu      sync.Mutex
	clients map[string]*Client // by owner
}

// webCluster is replicas behind one balancer: every replica's public URL
// is the balancer's, which sends each request to the replica the test
// queued, else round-robin.
type webCluster struct {
	t        *testing.T
	srv      *testoauth.Server
	rs       *testredis.Server
	front    *httptest.Server
	replicas []*webReplica
	log      *syncBuffer
	tokens   map[string]string
	sc       config.Server

	mu     sync.Mutex
	queue  []int
	next   int
	served []string // which replica served each request, in order
}

func newWebCluster(t *testing.T, n int) *webCluster {
	f := &webCluster{t: t, srv: testoauth.New(t, testoauth.Options{}), rs: testredis.Start(t), log: &syncBuffer{},
		tokens: map[string]string{"alice": "spm_alice-0123456789", "bob": "spm_bob-0123456789abc", "mallory": "spm_mallory-012345678"}}
	f.sc = config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: f.srv.MCPURL(), Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}}
	f.front = httptest.NewServer(http.HandlerFunc(f.balance))
	t.Cleanup(f.front.Close)
	logger := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var firstDir string
	for i := range n {
		r, err := state.NewRedis(state.RedisOptions{URL: f.rs.URL(), Prefix: "t", Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Close() })
		dir := t.TempDir()
		if i == 0 {
			firstDir = dir
			if _, err := (&Store{Dir: dir}).sealer(false); err != nil {
				t.Fatal(err)
			}
		} else {
			copyKey(t, firstDir, dir)
		}
		rep := &webReplica{name: string(rune('A' + i)), store: &Store{Dir: dir, Shared: r}, redis: r, clients: map[string]*Client{}}
		rep.web = NewWebLogins(f.front.URL)
		rep.web.Store, rep.web.Logger = rep.store, logger.With("replica", rep.name)
		rep.web.TokenOwner = func(tok string) (string, bool) {
			owner := ""
			for o, want := range f.tokens {
				if subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1 {
					owner = o
				}
			}
			return owner, owner != ""
		}
		rep.web.Clients = func(owner, server string) (*Client, bool) {
			if server != f.sc.Name {
				return nil, false
			}
			return f.client(rep, owner), true
		}
		f.replicas = append(f.replicas, rep)
	}
	return f
}

// balance sends r to the next replica.
func (f *webCluster) balance(rw http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	i := f.next % len(f.replicas)
	if len(f.queue) > 0 {
		i, f.queue = f.queue[0], f.queue[1:]
	} else {
		f.next++
	}
	rep := f.replicas[i]
	f.served = append(f.served, rep.name+" "+r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	rep.web.ServeHTTP(rw, r)
}

// route queues the replicas (0 is A) the next requests go to.
func (f *webCluster) route(replicas ...int) {
	f.mu.Lock()
	f.queue = append(f.queue, replicas...)
	f.mu.Unlock()
}

func (f *webCluster) servedLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.served...)
}

// client is rep's client of the upstream for owner (one per owner, as a
// replica's pool keeps).
func (f *webCluster) client(rep *webReplica, owner string) *Client {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if c := rep.clients[owner]; c != nil {
		return c
	}
	c := New(Options{Server: f.sc, Store: rep.store, Owner: owner, Web: rep.web,
		Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", rep.name)})
	rep.clients[owner] = c
	return c
}

// loginURL is the URL owner's call on replica i is handed.
func (f *webCluster) loginURL(i int, owner string) string {
	f.t.Helper()
	_, err := f.client(f.replicas[i], owner).Token(context.Background())
	var le *LoginError
	if !errors.As(err, &le) || le.URL == "" {
		f.t.Fatalf("replica %s, %s before login: %v, want a LoginError with a URL", f.replicas[i].name, owner, err)
	}
	if !strings.HasPrefix(le.URL, f.front.URL+BeginPath+"?") {
		f.t.Fatalf("the login URL is not the balancer's begin page: %s", le.URL)
	}
	return le.URL
}

// whoami is what the upstream says the token of owner's client on
// replica i is for.
func (f *webCluster) whoami(i int, owner string) string {
	wf := &webFixture{t: f.t, srv: f.srv}
	return wf.whoami(f.client(f.replicas[i], owner))
}

// stopAtCallback makes b stop before the redirect back reaches the
// server; the callback URL is then its last response's Location.
func stopAtCallback(b *testoauth.Browser) {
	b.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == CallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}
}

// proveTo posts the begin form and returns the callback URL the
// authorization server redirected to (b stops there).
func proveTo(t *testing.T, b *testoauth.Browser, loginURL, token string) string {
	t.Helper()
	stopAtCallback(b)
	u, _ := url.Parse(loginURL)
	form := url.Values{BeginLoginField: {u.Query().Get(BeginLoginField)}, BeginTokenField: {token}}
	resp, err := b.PostForm(u.Scheme+"://"+u.Host+BeginPath, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cb := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || !strings.Contains(cb, CallbackPath+"?") {
		t.Fatalf("proof: HTTP %d, Location %q; want the authorization server's redirect back", resp.StatusCode, cb)
	}
	return cb
}

// TestWebLoginAcrossReplicas (issue 34, replicas): behind a balancer
// without stickiness, a login begun on A is shown on B, proven on B and
// completed on C; both replicas hand out one URL; the token is every
// replica's; the callback again is refused; Redis holds the login sealed
// and nothing of it after; nothing secret is logged.
func TestWebLoginAcrossReplicas(t *testing.T) {
	f := newWebCluster(t, 3)
	ua := f.loginURL(0, "alice")
	if ub := f.loginURL(1, "alice"); ub != ua {
		t.Fatalf("replicas A and B handed out two logins for one owner and server:\n%s\n%s", ua, ub)
	}
	if ubob := f.loginURL(2, "bob"); ubob == ua {
		t.Fatal("bob was handed alice's login")
	}
	id, _ := url.Parse(ua)
	raw, err := f.replicas[0].redis.GetValue(context.Background(), layout.OAuthWebLoginName(id.Query().Get(BeginLoginField)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte(sealMagic+".")) || bytes.Contains(raw, []byte("verifier")) || bytes.Contains(raw, []byte("alice")) {
		t.Fatalf("the pending login on Redis is not sealed: %q", raw)
	}

	alice := f.srv.Browser("alice-person")
	f.route(1) // the begin page on B
	if code, body := get(t, alice, ua); code != http.StatusOK || !strings.Contains(body, "owner alice") {
		t.Fatalf("begin page on B: %d %s", code, body)
	}
	f.route(1) // the proof on B
	cb := proveTo(t, alice, ua, f.tokens["alice"])
	alice.CheckRedirect = nil
	f.route(2) // the redirect back on C
	if code, body := get(t, alice, cb); code != http.StatusOK || !strings.Contains(body, "Logged in to remote") {
		t.Fatalf("callback on C: HTTP %d %s\nserved: %v", code, body, f.servedLog())
	}
	for i := range f.replicas {
		if got := f.whoami(i, "alice"); !strings.HasSuffix(got, " as alice-person") {
			t.Errorf("replica %s: alice's calls run as %q", f.replicas[i].name, got)
		}
	}
	// Good once, on any replica.
	for i := range f.replicas {
		f.route(i)
		if code, _ := get(t, alice, cb); code != http.StatusBadRequest {
			t.Errorf("the callback replayed on %s: HTTP %d, want 400", f.replicas[i].name, code)
		}
	}
	f.route(0)
	if code, _ := get(t, alice, ua); code != http.StatusBadRequest {
		t.Errorf("the begin page of a completed login: HTTP %d, want 400", code)
	}
	if got := f.servedLog(); len(got) < 3 || !strings.HasPrefix(got[0], "B GET") || !strings.HasPrefix(got[1], "B POST") || !strings.HasPrefix(got[2], "C GET "+CallbackPath) {
		t.Errorf("the steps did not go where the test sent them: %v", got)
	}
	// Nothing of the login is left but bob's.
	ctx := context.Background()
	for _, name := range []string{layout.OAuthWebLoginName(id.Query().Get(BeginLoginField)), layout.OAuthWebLoginOwnerName("alice", "remote")} {
		if _, err := f.replicas[0].redis.GetValue(ctx, name); !errors.Is(err, state.ErrNoValue) {
			t.Errorf("%s left on Redis: %v", name, err)
		}
	}
	cbu, _ := url.Parse(cb)
	if _, err := f.replicas[0].redis.GetValue(ctx, layout.OAuthWebLoginStateName(stateSum(cbu.Query().Get("state")))); !errors.Is(err, state.ErrNoValue) {
		t.Errorf("the state's name left on Redis: %v", err)
	}
	// A new call hands out a new login (the old one is spent).
	logout(t, f.replicas[1].store, "alice")
	if again := f.loginURL(1, "alice"); again == ua {
		t.Error("a spent login's URL was handed out again")
	}

	logged := f.log.String()
	secrets := map[string]string{"the state": cbu.Query().Get("state"), "the code": cbu.Query().Get("code")}
	for o, tok := range f.tokens {
		secrets[o+"'s bearer token"] = tok
	}
	for _, sc := range alice.SetCookies() {
		if name, val, _ := strings.Cut(strings.SplitN(sc, ";", 2)[0], "="); strings.HasPrefix(name, "spm-login-") && val != "" {
			secrets["the cookie"] = val
		}
	}
	if secrets["the cookie"] == "" {
		t.Error("no login cookie found")
	}
	for what, s := range secrets {
		if s != "" && strings.Contains(logged, s) {
			t.Errorf("the log holds %s:\n%s", what, logged)
		}
	}
}

// logout logs owner out of the upstream on s (a test's shortcut to "the
// token is gone", so that a call needs a login again).
func logout(t *testing.T, s *Store, owner string) {
	t.Helper()
	if err := s.Shared.DeleteValue(context.Background(), layout.OAuthRecordName(owner, "remote")); err != nil {
		t.Fatal(err)
	}
}

// TestWebLoginReplicasConcurrentCallbacks: the same redirect back sent
// at once to two replicas completes once; the other is refused.
func TestWebLoginReplicasConcurrentCallbacks(t *testing.T) {
	for round := range 5 {
		f := newWebCluster(t, 2)
		u := f.loginURL(0, "alice")
		alice := f.srv.Browser("alice-person")
		f.route(1)
		cb := proveTo(t, alice, u, f.tokens["alice"])
		alice.CheckRedirect = nil
		f.route(0, 1)
		codes := make(chan string, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				resp, err := alice.Get(cb)
				if err != nil {
					t.Error(err)
					codes <- "error"
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusOK && strings.Contains(string(body), "Logged in to remote"):
					codes <- "completed"
				case resp.StatusCode == http.StatusBadRequest:
					codes <- "refused"
				default:
					codes <- fmt.Sprintf("HTTP %d %s", resp.StatusCode, body)
				}
			})
		}
		wg.Wait()
		close(codes)
		got := map[string]int{}
		for c := range codes {
			got[c]++
		}
		if got["completed"] != 1 || got["refused"] != 1 {
			t.Fatalf("round %d: two callbacks at once on A and B: %v, want one completed and one refused\nserved %v", round, got, f.servedLog())
		}
		if who := f.whoami(0, "alice"); !strings.HasSuffix(who, " as alice-person") {
			t.Fatalf("round %d: alice's calls run as %q", round, who)
		}
	}
}

// TestWebLoginReplicasBinding: on replicas too, a redirect back without
// the proven browser's cookie is refused (and leaves the login for the
// owner), a proof with another owner's token is refused, and a login
// expires.
func TestWebLoginReplicasBinding(t *testing.T) {
	f := newWebCluster(t, 2)
	u := f.loginURL(0, "bob")
	mallory, bob := f.srv.Browser("mallory-person"), f.srv.Browser("bob-person")
	f.route(1)
	if code, _ := prove(t, mallory, u, f.tokens["mallory"], ""); code != http.StatusForbidden {
		t.Errorf("mallory's token as bob's proof: HTTP %d, want 403", code)
	}
	f.route(0)
	cb := proveTo(t, bob, u, f.tokens["bob"])
	bob.CheckRedirect = nil
	// Mallory has bob's redirect back (state and code), without his
	// cookie, then with a forged one.
	f.route(1)
	if code, body := get(t, mallory, cb); code != http.StatusForbidden || !strings.Contains(body, "did not prove") {
		t.Errorf("leaked redirect, no cookie: HTTP %d %s", code, body)
	}
	lid, _ := url.Parse(u)
	f.replicas[1].web.mu.Lock()
	ckName := f.replicas[1].web.cookieLocked(&webLogin{id: lid.Query().Get(BeginLoginField)}).Name
	f.replicas[1].web.mu.Unlock()
	front, _ := url.Parse(f.front.URL + CallbackPath)
	mallory.Jar.SetCookies(front, []*http.Cookie{{Name: ckName, Value: randomString(32), Path: CallbackPath}})
	f.route(0)
	if code, _ := get(t, mallory, cb); code != http.StatusForbidden {
		t.Errorf("leaked redirect, forged cookie: HTTP %d, want 403", code)
	}
	if _, err := f.client(f.replicas[0], "bob").Token(context.Background()); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("after the refused redirects bob has a token: %v", err)
	}
	f.route(1)
	if code, body := get(t, bob, cb); code != http.StatusOK {
		t.Fatalf("bob's own redirect back after the refused ones: HTTP %d %s", code, body)
	}
	if who := f.whoami(1, "bob"); !strings.HasSuffix(who, " as bob-person") {
		t.Fatalf("bob's calls run as %q", who)
	}

	// Expiry: past webLoginTTL on every replica's clock, a login is
	// unknown on every step, and a call hands out a new one.
	clk := &clock{now: time.Now()}
	for _, r := range f.replicas {
		r.web.now = clk.Now
	}
	ua := f.loginURL(0, "alice")
	alice := f.srv.Browser("alice-person")
	stopAtCallback(alice)
	f.route(1)
	resp, err := alice.PostForm(f.front.URL+BeginPath, url.Values{BeginLoginField: {mustLoginID(t, ua)}, BeginTokenField: {f.tokens["alice"]}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cbA := resp.Header.Get("Location")
	clk.Add(webLoginTTL + time.Second)
	f.route(0, 1)
	if code, _ := get(t, alice, ua); code != http.StatusBadRequest {
		t.Errorf("the begin page after expiry: HTTP %d, want 400", code)
	}
	alice.CheckRedirect = nil
	if code, _ := get(t, alice, cbA); code != http.StatusBadRequest {
		t.Errorf("the redirect back after expiry: HTTP %d, want 400", code)
	}
	if again := f.loginURL(1, "alice"); again == ua {
		t.Error("an expired login was handed out again")
	}
}

func mustLoginID(t *testing.T, loginURL string) string {
	t.Helper()
	u, err := url.Parse(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(BeginLoginField)
}

// TestWebLoginReplicasRedisDown: with Redis away each step says so,
// naming [cluster] redis_url, and nothing panics; once it is back the
// login goes on.
func TestWebLoginReplicasRedisDown(t *testing.T) {
	f := newWebCluster(t, 2)
	u := f.loginURL(0, "alice")
	alice := f.srv.Browser("alice-person")
	f.route(1)
	cb := proveTo(t, alice, u, f.tokens["alice"])
	alice.CheckRedirect = nil
	f.rs.Kill()
	for _, step := range []struct {
		name string
		do   func() (int, string)
	}{
		{"begin page", func() (int, string) { return get(t, alice, u) }},
		{"proof", func() (int, string) { return prove(t, alice, u, f.tokens["alice"], "") }},
		{"redirect back", func() (int, string) { return get(t, alice, cb) }},
	} {
		if code, body := step.do(); code != http.StatusServiceUnavailable || !strings.Contains(body, "[cluster] redis_url") {
			t.Errorf("%s with Redis away: HTTP %d %s", step.name, code, body)
		}
	}
	_, err := f.client(f.replicas[1], "bob").Token(context.Background())
	if !errors.Is(err, state.ErrUnavailable) || errors.Is(err, ErrLoginRequired) {
		t.Errorf("a call with Redis away: %v, want state.ErrUnavailable", err)
	}
	f.rs.Restart()
	// Redis came back empty: the login is unknown (not half of one), and
	// the next call hands out a new one, which completes.
	if code, _ := get(t, alice, cb); code != http.StatusBadRequest {
		t.Errorf("the redirect back once Redis is back, empty: HTTP %d, want 400", code)
	}
	u2 := f.loginURL(1, "alice")
	if u2 == u {
		t.Fatal("the lost login's URL was handed out again")
	}
	f.route(0)
	cb2 := proveTo(t, alice, u2, f.tokens["alice"])
	alice.CheckRedirect = nil
	f.route(1)
	if code, body := get(t, alice, cb2); code != http.StatusOK {
		t.Fatalf("a new login once Redis is back: HTTP %d %s", code, body)
	}
	if who := f.whoami(0, "alice"); !strings.HasSuffix(who, " as alice-person") {
		t.Fatalf("alice's calls run as %q", who)
	}
}

// TestRecheckWakesWaiters: a client waiting for a login (its Changed)
// is woken by Recheck once another replica's login put a token on the
// shared store, and not by a Recheck that finds nothing new.
func TestRecheckWakesWaiters(t *testing.T) {
	f := newWebCluster(t, 2)
	a := f.client(f.replicas[0], "alice")
	ch := a.Changed()
	a.Recheck(context.Background())
	select {
	case <-ch:
		t.Fatal("Recheck woke the waiters with no token stored")
	default:
	}
	u := f.loginURL(1, "alice")
	alice := f.srv.Browser("alice-person")
	f.route(1, 1)
	if code, body := prove(t, alice, u, f.tokens["alice"], ""); code != http.StatusOK {
		t.Fatalf("alice's login on B: HTTP %d %s", code, body)
	}
	select {
	case <-ch:
		t.Fatal("A's waiters were woken before any Recheck (the login was B's)")
	default:
	}
	a.Recheck(context.Background())
	select {
	case <-ch:
	case <-time.After(testwait.Timeout): // a bound on the event, not a wait for it
		t.Fatal("Recheck after B's login did not wake A's waiters")
	}
	ch = a.Changed()
	a.Recheck(context.Background())
	select {
	case <-ch:
		t.Error("a second Recheck with the same token woke the waiters again")
	default:
	}
}
