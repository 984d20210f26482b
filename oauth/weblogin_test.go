package oauth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
)

// syncBuffer is a log sink several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// webFixture is a server front (the begin page and the callback on real
// HTTP) with owners alice, bob and mallory, each with a bearer token, and
// an OAuth upstream whose logins go through the front.
type webFixture struct {
	t      *testing.T
	srv    *testoauth.Server
	front  *httptest.Server
	web    *WebLogins
	store  *Store
	log    *syncBuffer
	tokens map[string]string
	sc     config.Server
}

func newWebFixture(t *testing.T) *webFixture {
	f := &webFixture{t: t, srv: testoauth.New(t, testoauth.Options{}), log: &syncBuffer{}, store: &Store{Dir: t.TempDir()},
		tokens: map[string]string{"alice": "spm_alice-0123456789", "bob": "spm_bob-0123456789abc", "mallory": "spm_mallory-012345678"}}
	mux := http.NewServeMux()
	f.front = httptest.NewServer(mux)
	t.Cleanup(f.front.Close)
	f.web = NewWebLogins(f.front.URL)
	f.web.TokenOwner = func(tok string) (string, bool) {
		owner := ""
		for o, want := range f.tokens {
			if subtle.ConstantTimeCompare([]byte(tok), []byte(want)) == 1 {
				owner = o
			}
		}
		return owner, owner != ""
	}
	mux.Handle(BeginPath, f.web)
	mux.Handle(CallbackPath, f.web)
	f.sc = config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: f.srv.MCPURL(), Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}}
	return f
}

func (f *webFixture) client(owner string) *Client {
	return New(Options{Server: f.sc, Store: f.store, Owner: owner, Web: f.web, Logger: slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
}

// loginURL is the URL c's LoginError hands out.
func (f *webFixture) loginURL(c *Client) string {
	f.t.Helper()
	_, err := c.Token(context.Background())
	var le *LoginError
	if !errors.As(err, &le) || le.URL == "" || !strings.Contains(err.Error(), "open "+le.URL) {
		f.t.Fatalf("Token before login: %v, want a LoginError with a URL", err)
	}
	if !strings.HasPrefix(le.URL, f.front.URL+BeginPath+"?") || strings.Contains(le.URL, "state") {
		f.t.Fatalf("the login URL is not the server's begin page, or carries a state: %s", le.URL)
	}
	return le.URL
}

// authURL is the authorization URL of c's pending login (what a leak of
// the state would give away).
func (f *webFixture) authURL(c *Client) string {
	f.web.mu.Lock()
	defer f.web.mu.Unlock()
	l := f.web.byClient[c]
	if l == nil {
		f.t.Fatal("no pending login")
	}
	return l.authURL
}

// get fetches u with b and returns the status and body.
func get(t *testing.T, b *testoauth.Browser, u string) (int, string) {
	t.Helper()
	resp, err := b.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// prove posts the begin form of loginURL with token from b (with origin
// as its Origin header when not ""), following the redirects.
func prove(t *testing.T, b *testoauth.Browser, loginURL, token, origin string) (int, string) {
	t.Helper()
	u, _ := url.Parse(loginURL)
	form := url.Values{BeginLoginField: {u.Query().Get(BeginLoginField)}, BeginTokenField: {token}}
	req, _ := http.NewRequest(http.MethodPost, u.Scheme+"://"+u.Host+BeginPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
	}
	resp, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// whoami is what the upstream says c's token is for.
func (f *webFixture) whoami(c *Client) string {
	f.t.Helper()
	hc := &http.Client{Transport: c.Wrap(nil)}
	call := func(body string, sid string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, f.srv.MCPURL(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := hc.Do(req)
		if err != nil {
			f.t.Fatalf("%s: %v", body, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	call(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid)
	_, out := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, sid)
	i := strings.Index(out, "hello ")
	if i < 0 {
		f.t.Fatalf("whoami: %s", out)
	}
	return strings.SplitN(out[i:], `"`, 2)[0]
}

// notLoggedIn fails the test when c has a token.
func (f *webFixture) notLoggedIn(c *Client, after string) {
	f.t.Helper()
	if _, err := c.Token(context.Background()); !errors.Is(err, ErrLoginRequired) {
		f.t.Fatalf("after %s, %s has a token (err %v)", after, c.opts.Owner, err)
	}
}

// TestWebLoginBoundToOwner (issue 39, item 6): a login through the server
// is completed only by a browser that proved, on the begin page, that it
// is the owner's. A person holding bob's login URL, or even its
// authorization URL (the state), cannot make bob's calls run as them;
// forged, mismatched and replayed cookies are refused; bob's own browser,
// with his token, completes it. The log holds no state, code, cookie or
// token.
func TestWebLoginBoundToOwner(t *testing.T) {
	f := newWebFixture(t)
	alice, bob := f.client("alice"), f.client("bob")
	ub, ua := f.loginURL(bob), f.loginURL(alice)
	if again := f.loginURL(bob); again != ub {
		t.Error("a second call began a second login instead of handing out the pending one")
	}
	before := f.srv.Authorizations.Load()
	mallory := f.srv.Browser("mallory-person")

	// The begin page says whose login it is, and asks for proof.
	if code, body := get(t, mallory, ub); code != http.StatusOK || !strings.Contains(body, "owner bob") || !strings.Contains(body, "remote") || !strings.Contains(body, `type="password"`) {
		t.Fatalf("begin page: %d %s", code, body)
	}
	if n := f.srv.Authorizations.Load(); n != before {
		t.Fatal("opening the begin page went on to the authorization server without proof")
	}

	for _, tc := range []struct {
		name   string
		token  string
		origin string
	}{
		{"no token", "", ""},
		{"a wrong token", "spm_guess", ""},
		{"another owner's token", f.tokens["mallory"], ""},
		{"bob's token, posted cross-origin", f.tokens["bob"], "https://evil.example"},
	} {
		if code, _ := prove(t, mallory, ub, tc.token, tc.origin); code != http.StatusForbidden {
			t.Errorf("%s: HTTP %d, want 403", tc.name, code)
		}
	}
	if n := f.srv.Authorizations.Load(); n != before {
		t.Fatal("a refused proof went on to the authorization server")
	}
	f.notLoggedIn(bob, "refused proofs")

	// The worst case: bob's state leaked. Mallory authorizes with her
	// account and comes back without a cookie, with a forged one, and
	// with alice's (alice proved her own login).
	aliceBrowser := f.srv.Browser("alice-person")
	f.web.mu.Lock()
	bobCookie := f.web.cookieLocked(f.web.byClient[bob]).Name
	f.web.mu.Unlock()
	authB := f.authURL(bob)
	if code, body := get(t, mallory, authB); code != http.StatusForbidden || !strings.Contains(body, "did not prove it is the owner") {
		t.Errorf("leaked state, no cookie: HTTP %d %s, want 403", code, body)
	}
	front, _ := url.Parse(f.front.URL + CallbackPath)
	mallory.Jar.SetCookies(front, []*http.Cookie{{Name: bobCookie, Value: randomString(32), Path: CallbackPath}})
	if code, _ := get(t, mallory, authB); code != http.StatusForbidden {
		t.Errorf("leaked state, forged cookie: HTTP %d, want 403", code)
	}
	// Alice proves her login but does not follow it to the end:
	// her browser stops at the authorization server.
	aliceBrowser.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if code, _ := prove(t, aliceBrowser, ua, f.tokens["alice"], ""); code != http.StatusSeeOther {
		t.Fatalf("alice's proof: HTTP %d, want 303", code)
	}
	var aliceSecret string
	for _, ck := range aliceBrowser.Jar.Cookies(front) {
		if strings.HasPrefix(ck.Name, "spm-login-") {
			aliceSecret = ck.Value
		}
	}
	if aliceSecret == "" {
		t.Fatal("alice's proof set no cookie")
	}
	aliceBrowser.CheckRedirect = nil
	mallory.Jar.SetCookies(front, []*http.Cookie{{Name: bobCookie, Value: aliceSecret, Path: CallbackPath}})
	if code, _ := get(t, mallory, authB); code != http.StatusForbidden {
		t.Errorf("leaked state, another login's cookie: HTTP %d, want 403", code)
	}
	// Alice's own browser, holding her cookie, on bob's login.
	if code, _ := get(t, aliceBrowser, authB); code != http.StatusForbidden {
		t.Errorf("bob's login in alice's proven browser: HTTP %d, want 403", code)
	}
	f.notLoggedIn(bob, "the refused redirects")

	// Bob, in his own browser, with his token: done, as bob.
	bobBrowser := f.srv.Browser("bob-person")
	if code, body := prove(t, bobBrowser, ub, f.tokens["bob"], ""); code != http.StatusOK || !strings.Contains(body, "Logged in to remote") {
		t.Fatalf("bob's proven login: HTTP %d %s", code, body)
	}
	if got := f.whoami(bob); !strings.HasSuffix(got, " as bob-person") {
		t.Fatalf("bob's calls run as %q, want bob-person", got)
	}
	// Alice's, completed by her own browser (already proven).
	if code, _ := get(t, aliceBrowser, f.authURL(alice)); code != http.StatusOK {
		t.Fatalf("alice's login: HTTP %d", code)
	}
	if got := f.whoami(alice); !strings.HasSuffix(got, " as alice-person") {
		t.Fatalf("alice's calls run as %q", got)
	}

	// Replays: the redirect back again (its code and state), and the
	// begin URL again, are refused.
	var callback string
	for _, v := range bobBrowser.Visited() {
		if strings.HasPrefix(v, f.front.URL+CallbackPath) {
			callback = v
		}
	}
	if code, _ := get(t, bobBrowser, callback); code != http.StatusBadRequest {
		t.Errorf("replayed redirect: HTTP %d, want 400", code)
	}
	if code, _ := prove(t, bobBrowser, ub, f.tokens["bob"], ""); code != http.StatusBadRequest {
		t.Errorf("proof for a completed login: HTTP %d, want 400", code)
	}
	if got := f.whoami(bob); !strings.HasSuffix(got, " as bob-person") {
		t.Fatalf("after the replays bob's calls run as %q", got)
	}

	// Nothing secret was logged.
	logged := f.log.String()
	cb, _ := url.Parse(callback)
	au, _ := url.Parse(authB)
	secrets := map[string]string{"bob's state": au.Query().Get("state"), "bob's code": cb.Query().Get("code"), "alice's cookie": aliceSecret}
	for o, tok := range f.tokens {
		secrets[o+"'s bearer token"] = tok
	}
	for _, sc := range bobBrowser.SetCookies() {
		name, val, _ := strings.Cut(strings.SplitN(sc, ";", 2)[0], "=")
		if val != "" {
			secrets["bob's cookie "+name] = val
		}
	}
	for what, s := range secrets {
		if s == "" {
			t.Errorf("%s: not found by the test", what)
		} else if strings.Contains(logged, s) {
			t.Errorf("the log holds %s:\n%s", what, logged)
		}
	}
	t.Logf("log:\n%s", logged)
	if !strings.Contains(logged, "did not begin it") {
		t.Errorf("the refused redirects were not logged:\n%s", logged)
	}
}

// TestWebLoginCookie: the cookie binding a login to the proven browser
// is HttpOnly and SameSite=Lax; with an https URL it is Secure and
// __Host-, else limited to the callback's path. Its value is not what
// the login keeps.
func TestWebLoginCookie(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:8080", "https://mcp.example.com"} {
		w := NewWebLogins(base)
		l := &webLogin{id: "abc"}
		ck := w.cookieLocked(l)
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
			t.Errorf("%s: %+v", base, ck)
		}
		https := strings.HasPrefix(base, "https")
		if https && (!ck.Secure || !strings.HasPrefix(ck.Name, "__Host-") || ck.Path != "/") {
			t.Errorf("%s: want Secure __Host- at /: %+v", base, ck)
		}
		if !https && (ck.Secure || ck.Path != CallbackPath) {
			t.Errorf("%s: want the callback's path: %+v", base, ck)
		}
	}
}

// TestWebLoginTwoOwners: two owners of one server log in through the
// server's own callback, each with a URL of their own, and end up with
// two identities (two registered clients, two tokens in two stores).
func TestWebLoginTwoOwners(t *testing.T) {
	f := newWebFixture(t)
	alice, bob := f.client("alice"), f.client("bob")
	ua, ub := f.loginURL(alice), f.loginURL(bob)
	if ua == ub {
		t.Fatal("two owners got the same login URL")
	}
	if !strings.Contains(f.authURL(alice), "redirect_uri="+url.QueryEscape(f.front.URL+CallbackPath)) {
		t.Errorf("the login's redirect is not the server's callback: %s", f.authURL(alice))
	}
	// A forged or stale state is refused.
	if code, _ := get(t, f.srv.Browser("x"), f.front.URL+CallbackPath+"?state=nope&code=x"); code != http.StatusBadRequest {
		t.Errorf("unknown state: HTTP %d, want 400", code)
	}
	for _, o := range []struct {
		c   *Client
		url string
	}{{alice, ua}, {bob, ub}} {
		if code, body := prove(t, f.srv.Browser(o.c.opts.Owner+"-person"), o.url, f.tokens[o.c.opts.Owner], ""); code != http.StatusOK {
			t.Fatalf("%s: HTTP %d %s", o.c.opts.Owner, code, body)
		}
	}
	who := func(c *Client) string {
		t.Helper()
		f.whoami(c)
		rec, err := f.store.Load(context.Background(), c.opts.Owner, "remote")
		if err != nil {
			t.Fatal(err)
		}
		return rec.Client.ID
	}
	if a, b := who(alice), who(bob); a == b || a == "" {
		t.Errorf("alice and bob share the identity %q / %q", a, b)
	}
	for _, o := range []string{"alice", "bob"} {
		if _, err := os.Stat(filepath.Join(f.store.Dir, "owners", o, "remote.json")); err != nil {
			t.Errorf("%s's token: %v", o, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.store.Dir, "remote.json")); !os.IsNotExist(err) {
		t.Errorf("the user's own record was written: %v", err)
	}
	// The login URL was good once.
	if err := testoauth.Follow(ua); err == nil {
		t.Error("the same login URL completed twice")
	}
}
