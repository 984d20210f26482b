package oauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
)

// clock is a settable clock for expiry tests: no test waits for time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newClient is a Client of srv's streamable HTTP endpoint with a store in
// a temporary directory.
func newClient(t *testing.T, srv *testoauth.Server, auth config.Auth, clk *clock) *Client {
	t.Helper()
	if auth.Type == "" {
		auth.Type = config.AuthOAuth
	}
	if auth.Grant == "" {
		auth.Grant = config.GrantAuthorizationCode
	}
	opts := Options{
		Server: config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: srv.MCPURL(), Auth: &auth},
		Store:  &Store{Dir: t.TempDir()},
		Logger: slog.New(slog.DiscardHandler),
	}
	if clk != nil {
		opts.Now = clk.Now
	}
	return New(opts)
}

func login(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := c.Login(ctx, LoginOptions{Open: testoauth.Follow, Out: &out}); err != nil {
		t.Fatalf("Login: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "/authorize?") {
		t.Errorf("the authorization URL was not printed:\n%s", out.String())
	}
}

// initialize POSTs an MCP initialize through the client's transport and
// returns the status.
func initialize(t *testing.T, c *Client) (int, error) {
	t.Helper()
	hc := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, c.opts.Server.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestDiscoveryVariants(t *testing.T) {
	tests := []struct {
		name string
		opts testoauth.Options
	}{
		{"resource_metadata in the challenge", testoauth.Options{}},
		{"path-based well-known", testoauth.Options{PRM: "path"}},
		{"root well-known", testoauth.Options{PRM: "root"}},
		{"issuer with a path, RFC 8414", testoauth.Options{IssuerPath: "/tenant1"}},
		{"issuer with a path, OpenID inserted", testoauth.Options{IssuerPath: "/tenant1", OIDC: "insert"}},
		{"issuer with a path, OpenID appended", testoauth.Options{IssuerPath: "/tenant1", OIDC: "append"}},
		{"issuer without a path, OpenID", testoauth.Options{OIDC: "insert"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testoauth.New(t, tt.opts)
			c := newClient(t, srv, config.Auth{}, nil)
			d, _, err := c.discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.AS.Issuer != srv.Issuer() || d.AS.TokenEndpoint != srv.Issuer()+"/token" || d.Legacy {
				t.Errorf("discovered %+v", d.AS)
			}
			wantRes := srv.MCPURL()
			if tt.opts.PRM == "root" {
				wantRes = srv.URL // the metadata names the origin: the token is asked for it
			}
			if d.Resource != wantRes {
				t.Errorf("resource = %q, want %q", d.Resource, wantRes)
			}
			login(t, c)
			if code, err := initialize(t, c); err != nil || code != http.StatusOK {
				t.Fatalf("initialize after login: %d, %v", code, err)
			}
		})
	}
}

func TestLoginRefusedWithoutPKCE(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{NoPKCE: true})
	c := newClient(t, srv, config.Auth{}, nil)
	err := c.Login(context.Background(), LoginOptions{Open: testoauth.Follow})
	if !errors.Is(err, ErrDiscovery) || !strings.Contains(err.Error(), "S256") {
		t.Fatalf("Login = %v, want ErrDiscovery naming S256", err)
	}
	if srv.Authorizations.Load() != 0 {
		t.Error("the authorization endpoint was visited without PKCE support")
	}
}

func TestLoginStoresTokenPrivately(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{ScopesSupported: []string{"mcp:read", "mcp:tools"}})
	c := newClient(t, srv, config.Auth{}, nil)
	if _, err := c.Token(context.Background()); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("Token before login = %v, want ErrLoginRequired", err)
	} else if !strings.Contains(err.Error(), "scratchpad-mcp auth login remote") {
		t.Errorf("the error does not name the command: %v", err)
	}
	login(t, c)
	if srv.Registrations.Load() != 1 {
		t.Errorf("registrations = %d, want 1 (dynamic)", srv.Registrations.Load())
	}
	st, err := c.Status()
	if err != nil || !st.LoggedIn || st.Scope != "mcp:read mcp:tools" || st.Registered != "dynamic" || !st.Refreshable {
		t.Errorf("Status = %+v, %v; want logged in with scopes_supported, dynamic, refreshable", st, err)
	}
	p := filepath.Join(c.opts.Store.Dir, "remote.json")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	rec, _ := c.opts.Store.Load(context.Background(), "", "remote")
	if s := rec.Token.String(); strings.Contains(s, rec.Token.AccessToken) || strings.Contains(s, rec.Token.RefreshToken) {
		t.Errorf("Token.String shows a token: %s", s)
	}
	if code, err := initialize(t, c); err != nil || code != http.StatusOK {
		t.Fatalf("initialize: %d, %v", code, err)
	}
	if had, err := c.Logout(context.Background()); err != nil || !had {
		t.Fatalf("Logout = %v, %v", had, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("the token file is still there after logout: %v", err)
	}
	if _, err := c.Token(context.Background()); !errors.Is(err, ErrLoginRequired) {
		t.Errorf("Token after logout = %v, want ErrLoginRequired", err)
	}
}

func TestRefresh(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{TTL: time.Hour})
	clk := &clock{now: time.Now()}
	c := newClient(t, srv, config.Auth{}, clk)
	login(t, c)
	first, _ := c.Token(context.Background())
	probes := srv.Unauthorized.Load() // the login's unauthorized probe

	// Before expiry: refreshed without the server ever refusing it.
	clk.Add(time.Hour - 10*time.Second)
	if code, err := initialize(t, c); err != nil || code != http.StatusOK {
		t.Fatalf("initialize near expiry: %d, %v", code, err)
	}
	if srv.Refreshes.Load() != 1 || srv.Unauthorized.Load() != probes {
		t.Errorf("near expiry: refreshes %d, 401s %d; want 1 and 0", srv.Refreshes.Load(), srv.Unauthorized.Load()-probes)
	}
	second, _ := c.Token(context.Background())
	if second == first {
		t.Error("the token did not change")
	}

	// Refused by the server (expired there): refreshed and the request
	// sent again, so the caller sees only the answer.
	srv.ExpireAccess()
	if code, err := initialize(t, c); err != nil || code != http.StatusOK {
		t.Fatalf("initialize after the server expired the token: %d, %v", code, err)
	}
	if srv.Refreshes.Load() != 2 || srv.Unauthorized.Load() != probes+1 {
		t.Errorf("after a 401: refreshes %d, 401s %d; want 2 and 1", srv.Refreshes.Load(), srv.Unauthorized.Load()-probes)
	}

	// Another client of the same store (another process) sees the
	// rotated refresh token.
	other := New(c.opts)
	srv.ExpireAccess()
	if code, err := initialize(t, other); err != nil || code != http.StatusOK {
		t.Fatalf("a second client after a rotation: %d, %v", code, err)
	}

	// Revoked: the request fails with a LoginError naming the command.
	srv.RevokeAll()
	_, err := initialize(t, c)
	var le *LoginError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "auth login remote") {
		t.Fatalf("after revocation: %v, want a LoginError naming `auth login remote`", err)
	}
	// The refused refresh token is dropped: later requests do not ask the
	// authorization server again, and say why.
	refreshes := srv.RefreshAttempts.Load()
	if _, err := initialize(t, c); !errors.As(err, &le) || !strings.Contains(le.Reason, "refused the refresh token") {
		t.Errorf("the next request: %v", err)
	}
	rec, _ := c.opts.Store.Load(context.Background(), "", "remote")
	if srv.RefreshAttempts.Load() != refreshes || rec.Token.RefreshToken != "" || rec.Token.AccessToken != "" {
		t.Errorf("the refused grant was tried again (%d refreshes) or kept", srv.RefreshAttempts.Load()-refreshes)
	}
	if st, _ := c.Status(); st.LoggedIn {
		t.Error("Status says logged in after the refresh token was refused")
	}
	login(t, c)
	if code, err := initialize(t, c); err != nil || code != http.StatusOK {
		t.Errorf("after a new login: %d, %v", code, err)
	}
}

func TestStepUp(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`
	post := func(c *Client) (int, error) {
		hc := &http.Client{Transport: c.Wrap(nil)}
		req, _ := http.NewRequest(http.MethodPost, c.opts.Server.URL, strings.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	t.Run("authorization code asks for a login with the scope", func(t *testing.T) {
		srv := testoauth.New(t, testoauth.Options{ScopesSupported: []string{"read"}, CallScope: "write"})
		c := newClient(t, srv, config.Auth{}, nil)
		login(t, c)
		_, err := post(c)
		if !errors.Is(err, ErrLoginRequired) || !strings.Contains(err.Error(), `"read write"`) {
			t.Fatalf("tools/call without the scope: %v, want ErrLoginRequired naming the scope", err)
		}
		login(t, c) // asks for the stored scopes too
		if st, _ := c.Status(); st.Scope != "read write" {
			t.Errorf("scope after the second login = %q", st.Scope)
		}
		// Past the step-up, the server answers the call (a 400 here: no
		// session, which is beyond OAuth).
		if code, err := post(c); err != nil || code == http.StatusForbidden || code == http.StatusUnauthorized {
			t.Errorf("after the step-up login: %d, %v", code, err)
		}
	})
	t.Run("client credentials get the scope at once", func(t *testing.T) {
		srv := testoauth.New(t, testoauth.Options{ClientID: "svc", ClientSecret: "s3cret", CallScope: "write"})
		c := newClient(t, srv, config.Auth{Grant: config.GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"}, nil)
		if code, err := post(c); err != nil || code == http.StatusForbidden {
			t.Fatalf("tools/call: %d, %v", code, err)
		}
		if srv.Forbidden.Load() != 1 || srv.ClientCredentials.Load() != 2 {
			t.Errorf("403s %d, token requests %d; want 1 and 2", srv.Forbidden.Load(), srv.ClientCredentials.Load())
		}
	})
}

func TestClientCredentials(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		methods []string
		auth    config.Auth
		want    string
	}{
		{"secret, basic", nil, config.Auth{ClientID: "svc", ClientSecret: "s3cret"}, AuthBasic},
		{"secret, post", []string{AuthPost}, config.Auth{ClientID: "svc", ClientSecret: "s3cret"}, AuthPost},
		{"private_key_jwt", nil, config.Auth{ClientID: "svc", PrivateKeyFile: keyFile, SigningAlgorithm: "ES256"}, AuthPrivateKeyJWT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testoauth.New(t, testoauth.Options{ClientID: "svc", ClientSecret: "s3cret", ClientKey: &key.PublicKey, AuthMethods: tt.methods, NoRegistration: true})
			tt.auth.Grant = config.GrantClientCredentials
			c := newClient(t, srv, tt.auth, nil)
			if code, err := initialize(t, c); err != nil || code != http.StatusOK {
				t.Fatalf("initialize: %d, %v", code, err)
			}
			if got := srv.LastAuthMethod.Load(); got != tt.want {
				t.Errorf("authenticated with %v, want %s", got, tt.want)
			}
			// Expired at the server: a new token, no person needed.
			srv.ExpireAccess()
			if code, err := initialize(t, c); err != nil || code != http.StatusOK {
				t.Fatalf("initialize after expiry: %d, %v", code, err)
			}
			if n := srv.ClientCredentials.Load(); n != 2 {
				t.Errorf("token requests = %d, want 2", n)
			}
			rec, _ := c.opts.Store.Load(context.Background(), "", "remote")
			if rec.Client.Secret != "" {
				t.Error("the configured secret was written to the token store")
			}
		})
	}
	t.Run("wrong secret", func(t *testing.T) {
		srv := testoauth.New(t, testoauth.Options{ClientID: "svc", ClientSecret: "s3cret"})
		c := newClient(t, srv, config.Auth{Grant: config.GrantClientCredentials, ClientID: "svc", ClientSecret: "nope"}, nil)
		_, err := initialize(t, c)
		var te *TokenError
		if !errors.As(err, &te) || te.Code != "invalid_client" {
			t.Fatalf("initialize = %v, want the token endpoint's invalid_client", err)
		}
	})
}

func TestIdentify(t *testing.T) {
	as := func(cimd bool, reg string) *ServerMetadata {
		return &ServerMetadata{Issuer: "https://as", ClientIDMetadataDocumentSupported: cimd, RegistrationEndpoint: reg}
	}
	tests := []struct {
		name string
		cfg  config.Auth
		as   *ServerMetadata
		want string // Registered, or "error"
	}{
		{"configured first", config.Auth{ClientID: "id", ClientMetadataURL: "https://c/m.json"}, as(true, "https://as/reg"), "configured"},
		{"metadata document before registration", config.Auth{ClientMetadataURL: "https://c/m.json"}, as(true, "https://as/reg"), "metadata document"},
		{"metadata document unsupported: nothing else", config.Auth{ClientMetadataURL: "https://c/m.json"}, as(false, ""), "error"},
		{"nothing", config.Auth{}, as(true, ""), "error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := identify(context.Background(), http.DefaultClient, &tt.cfg, tt.as, "http://127.0.0.1:1/callback", nil)
			got := c.Registered
			if err != nil {
				got = "error"
				if !errors.Is(err, ErrRegistration) {
					t.Errorf("error %v is not ErrRegistration", err)
				}
			}
			if got != tt.want {
				t.Errorf("identify = %q (%v), want %q", got, err, tt.want)
			}
		})
	}
	// A pre-registered client with a secret, and the basic/post choice.
	srv := testoauth.New(t, testoauth.Options{ClientID: "pre", ClientSecret: "sec", AuthMethods: []string{AuthPost}})
	c := newClient(t, srv, config.Auth{ClientID: "pre", ClientSecret: "sec"}, nil)
	login(t, c)
	if srv.Registrations.Load() != 0 || srv.LastAuthMethod.Load() != AuthPost {
		t.Errorf("pre-registered: registrations %d, method %v; want 0 and %s", srv.Registrations.Load(), srv.LastAuthMethod.Load(), AuthPost)
	}
}

// TestBrowserCommand logs in with SCRATCHPAD_BROWSER set to curl, which
// follows the redirects headlessly as a browser would.
func TestBrowserCommand(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	t.Setenv(EnvBrowser, "curl -sfL -o /dev/null")
	srv := testoauth.New(t, testoauth.Options{})
	c := newClient(t, srv, config.Auth{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Login(ctx, LoginOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := c.Status(); !st.LoggedIn {
		t.Error("not logged in")
	}
}

// A discovery that fails names the URLs it tried, with a secret path
// segment of the server's URL masked (issue 39, item 8): the error
// reaches the log and, as a tool error, the model.
func TestDiscoveryErrorMasksURLSecrets(t *testing.T) {
	const secret = "PATHSECRET123"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The MCP endpoint wants a token; no metadata is found anywhere,
		// and the error pages quote what was asked.
		if strings.HasPrefix(r.URL.Path, "/mcp/") {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp/`+secret+`"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		http.Error(w, "no "+r.URL.Path, http.StatusNotFound)
	}))
	defer srv.Close()
	c := New(Options{
		Server: config.Server{Name: "remote", Transport: config.TransportHTTPStreamable, URL: srv.URL + "/mcp/" + secret,
			Auth: &config.Auth{Type: config.AuthOAuth, Grant: config.GrantAuthorizationCode}},
		Store: &Store{Dir: t.TempDir()}, Logger: slog.New(slog.DiscardHandler),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.Login(ctx, LoginOptions{Open: func(string) error { return nil }})
	if !errors.Is(err, ErrDiscovery) {
		t.Fatalf("Login = %v, want ErrDiscovery", err)
	}
	if msg := err.Error(); strings.Contains(msg, secret) || !strings.Contains(msg, "/mcp/xxxxx") {
		t.Errorf("the discovery error shows the secret, or not the URL: %s", msg)
	}
}
