// Package testoauth is an OAuth-protected MCP server for tests: a real
// authorization server (metadata, dynamic registration, an authorize
// endpoint that approves at once and redirects with a code, a token
// endpoint checking PKCE, the resource and the client, rotating refresh
// tokens, client credentials with a secret or a private_key_jwt
// assertion, revocation) and an MCP endpoint (go-sdk, streamable HTTP at
// /mcp and legacy SSE at /sse) that wants its bearer token.
//
// The "person" is whoever follows the authorization URL: a test's
// browser command (curl -L), [Follow], or a [Browser] logged in to the
// authorization server as a named person (whoami then says who).
package testoauth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shape the server. The zero value is a server with dynamic
// registration, metadata found through the 401's resource_metadata, and
// tokens valid for an hour.
type Options struct {
	// TTL is the access tokens' lifetime (expires_in); 0 is an hour.
	TTL time.Duration
	// ScopesSupported is the protected resource's scopes_supported.
	ScopesSupported []string
	// ChallengeScope is the scope of the 401 challenge; "" sends none.
	ChallengeScope string
	// CallScope, when set, is needed by tools/call: a token without it is
	// answered 403 insufficient_scope naming it.
	CallScope string
	// PRM says where the protected resource metadata is found: "header"
	// (default: the challenge's resource_metadata names it), "path" (only
	// at the path-inserted well-known URL) or "root".
	PRM string
	// IssuerPath is the issuer's path ("" or "/tenant1"); OIDC serves the
	// metadata only as OpenID Connect discovery ("insert" or "append"
	// for an issuer with a path).
	IssuerPath string
	OIDC       string
	// NoPKCE leaves code_challenge_methods_supported out of the metadata.
	NoPKCE bool
	// NoRegistration leaves the registration endpoint out.
	NoRegistration bool
	// CIMD says client_id_metadata_document_supported.
	CIMD bool
	// AuthMethods is token_endpoint_auth_methods_supported; nil lists
	// none, client_secret_basic, client_secret_post and private_key_jwt.
	AuthMethods []string
	// ClientID and ClientSecret are a pre-registered confidential client.
	ClientID, ClientSecret string
	// ClientKey is the public key of a pre-registered client ClientID
	// authenticating with private_key_jwt (ES256).
	ClientKey *ecdsa.PublicKey
}

// Server is a running OAuth-protected MCP server.
type Server struct {
	*httptest.Server
	opts   Options
	issuer string

	mu      sync.Mutex
	clients map[string]client
	codes   map[string]grant
	access  map[string]grant
	refresh map[string]grant

	// Counters, for tests to say what happened.
	Registrations, Authorizations, Refreshes, ClientCredentials, Unauthorized, Forbidden atomic.Int64
	// RefreshAttempts counts refresh requests, refused ones included.
	RefreshAttempts atomic.Int64
	// LastAuthMethod is how the last token request authenticated.
	LastAuthMethod atomic.Value
}

type client struct {
	secret   string
	redirect []string
}

// grant is what a code or token stands for.
type grant struct {
	client, scope, resource string
	person                  string    // who authorized it: [Browser].Person
	challenge, redirect     string    // codes
	expiry                  time.Time // access tokens
}

// New starts the server; t's cleanup closes it.
func New(t testing.TB, opts Options) *Server {
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	if opts.AuthMethods == nil {
		opts.AuthMethods = []string{"none", "client_secret_basic", "client_secret_post", "private_key_jwt"}
	}
	s := &Server{opts: opts, clients: map[string]client{}, codes: map[string]grant{}, access: map[string]grant{}, refresh: map[string]grant{}}
	if opts.ClientID != "" {
		s.clients[opts.ClientID] = client{secret: opts.ClientSecret}
	}
	mux := http.NewServeMux()
	mcpSrv := newMCPServer()
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return mcpSrv }, nil)
	mux.Handle("/mcp", s.protect(stream))
	mux.Handle("/sse", s.protect(sse))
	mux.HandleFunc("/.well-known/", s.wellKnown)
	mux.HandleFunc(opts.IssuerPath+"/.well-known/openid-configuration", s.wellKnown)
	mux.HandleFunc(opts.IssuerPath+"/authorize", s.authorize)
	mux.HandleFunc(opts.IssuerPath+"/token", s.token)
	mux.HandleFunc(opts.IssuerPath+"/register", s.register)
	mux.HandleFunc(opts.IssuerPath+"/revoke", s.revoke)
	s.Server = httptest.NewServer(mux)
	s.issuer = s.URL + opts.IssuerPath
	t.Cleanup(s.Close)
	return s
}

// MCPURL is the streamable HTTP endpoint; SSEURL the legacy SSE one.
func (s *Server) MCPURL() string { return s.URL + "/mcp" }
func (s *Server) SSEURL() string { return s.URL + "/sse" }

// Issuer is the authorization server's issuer identifier.
func (s *Server) Issuer() string { return s.issuer }

// ExpireAccess makes every access token issued so far invalid, as their
// expiry would: the next request with one is answered 401.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll revokes every access and refresh token: the client must log
// in again.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

func newMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "oauth-upstream", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", Description: "says which client the token is for", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			who := "?"
			if req.Extra != nil && req.Extra.Header != nil {
				who = req.Extra.Header.Get("X-Test-Client")
				if p := req.Extra.Header.Get("X-Test-Person"); p != "" {
					who += " as " + p
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + who}}}, nil
		})
	return s
}

// protect wants a valid bearer token, answers 401 with the challenge
// otherwise, and 403 insufficient_scope for a tools/call without
// CallScope.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		g, valid := s.access[tok]
		s.mu.Unlock()
		if !ok || !valid || time.Now().After(g.expiry) || g.resource != s.MCPURL() && g.resource != s.SSEURL() && g.resource != s.URL {
			s.Unauthorized.Add(1)
			w.Header().Set("WWW-Authenticate", s.challenge(r.URL.Path, "invalid_token", s.opts.ChallengeScope))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if s.opts.CallScope != "" && r.Method == http.MethodPost && !slices.Contains(strings.Fields(g.scope), s.opts.CallScope) {
			b, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(b))
			if strings.Contains(string(b), `"tools/call"`) {
				s.Forbidden.Add(1)
				w.Header().Set("WWW-Authenticate", s.challenge(r.URL.Path, "insufficient_scope", strings.TrimSpace(g.scope+" "+s.opts.CallScope)))
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
		}
		r.Header.Set("X-Test-Client", g.client)
		r.Header.Set("X-Test-Person", g.person)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) challenge(path, errCode, scope string) string {
	c := `Bearer error="` + errCode + `"`
	if s.opts.PRM == "" || s.opts.PRM == "header" {
		c += `, resource_metadata="` + s.URL + `/.well-known/oauth-protected-resource` + path + `"`
	}
	if scope != "" {
		c += `, scope="` + scope + `"`
	}
	return c
}

func (s *Server) wellKnown(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	prmPath := "/.well-known/oauth-protected-resource/mcp"
	switch {
	case p == prmPath && s.opts.PRM != "root", p == "/.well-known/oauth-protected-resource/sse" && s.opts.PRM != "root",
		p == "/.well-known/oauth-protected-resource" && s.opts.PRM == "root":
		res := s.URL + strings.TrimPrefix(p, "/.well-known/oauth-protected-resource")
		if s.opts.PRM == "root" {
			res = s.URL
		}
		writeJSON(w, http.StatusOK, map[string]any{"resource": res, "authorization_servers": []string{s.issuer}, "scopes_supported": s.opts.ScopesSupported})
		return
	}
	var want string
	switch {
	case s.opts.OIDC == "":
		want = "/.well-known/oauth-authorization-server" + s.opts.IssuerPath
	case s.opts.OIDC == "append":
		want = s.opts.IssuerPath + "/.well-known/openid-configuration"
	default:
		want = "/.well-known/openid-configuration" + s.opts.IssuerPath
	}
	if p != want {
		http.NotFound(w, r)
		return
	}
	md := map[string]any{
		"issuer":                                s.issuer,
		"authorization_endpoint":                s.issuer + "/authorize",
		"token_endpoint":                        s.issuer + "/token",
		"revocation_endpoint":                   s.issuer + "/revoke",
		"response_types_supported":              []string{"code"},
		"token_endpoint_auth_methods_supported": s.opts.AuthMethods,
		"client_id_metadata_document_supported": s.opts.CIMD,
	}
	if !s.opts.NoPKCE {
		md["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !s.opts.NoRegistration {
		md["registration_endpoint"] = s.issuer + "/register"
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.Registrations.Add(1)
	id := "dyn-" + random()
	c := client{redirect: req.RedirectURIs}
	resp := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": req.AuthMethod}
	if req.AuthMethod != "none" && req.AuthMethod != "" {
		c.secret = random()
		resp["client_secret"] = c.secret
	}
	s.mu.Lock()
	s.clients[id] = c
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	c, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known && !(s.opts.CIMD && strings.HasPrefix(q.Get("client_id"), "https://")):
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case len(c.redirect) > 0 && !slices.Contains(c.redirect, redirect):
		http.Error(w, "redirect_uri not registered", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 and response_type=code required", http.StatusBadRequest)
		return
	}
	s.Authorizations.Add(1)
	code := random()
	s.mu.Lock()
	person := ""
	if ck, err := r.Cookie(personCookie); err == nil {
		person = ck.Value
	}
	s.codes[code] = grant{client: q.Get("client_id"), scope: q.Get("scope"), resource: q.Get("resource"), challenge: q.Get("code_challenge"), redirect: redirect, person: person}
	s.mu.Unlock()
	u, _ := url.Parse(redirect)
	rq := u.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	rq.Set("iss", s.issuer)
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// authenticate checks the client of a token or revocation request and
// returns its id.
func (s *Server) authenticate(r *http.Request, audience string) (string, bool) {
	id, secret, basic := r.BasicAuth()
	method := "client_secret_basic"
	switch {
	case basic:
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	case r.PostForm.Get("client_assertion") != "":
		method = "private_key_jwt"
		id = r.PostForm.Get("client_id")
		if s.opts.ClientKey == nil || id != s.opts.ClientID || !verifyES256(s.opts.ClientKey, r.PostForm.Get("client_assertion"), id, audience) {
			return "", false
		}
		s.LastAuthMethod.Store(method)
		return id, true
	case r.PostForm.Get("client_secret") != "":
		method = "client_secret_post"
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	default:
		method = "none"
		id = r.PostForm.Get("client_id")
	}
	s.mu.Lock()
	c, known := s.clients[id]
	s.mu.Unlock()
	if !known && s.opts.CIMD && strings.HasPrefix(id, "https://") && method == "none" {
		known = true
	}
	if !known || subtle.ConstantTimeCompare([]byte(c.secret), []byte(secret)) != 1 {
		return "", false
	}
	s.LastAuthMethod.Store(method)
	return id, true
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	id, ok := s.authenticate(r, s.issuer)
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	var g grant
	switch f.Get("grant_type") {
	case "authorization_code":
		c, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || c.client != id || c.redirect != f.Get("redirect_uri"):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != c.challenge:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE verification failed"})
			return
		case f.Get("resource") != c.resource:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_target"})
			return
		}
		g = c
	case "refresh_token":
		s.RefreshAttempts.Add(1)
		c, ok := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotated
		if !ok || c.client != id {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		s.Refreshes.Add(1)
		g = c
	case "client_credentials":
		s.ClientCredentials.Add(1)
		g = grant{client: id, scope: f.Get("scope"), resource: f.Get("resource")}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := random(), random()
	g.expiry = time.Now().Add(s.opts.TTL)
	s.access[access] = g
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.opts.TTL / time.Second), "scope": g.scope}
	if f.Get("grant_type") != "client_credentials" {
		s.refresh[refresh] = g
		resp["refresh_token"] = refresh
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	s.mu.Lock()
	delete(s.refresh, r.PostForm.Get("token"))
	delete(s.access, r.PostForm.Get("token"))
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// Follow is a headless browser: it GETs authURL and follows the
// redirects, to the client's loopback redirect included.
func Follow(authURL string) error {
	resp, err := http.Get(authURL)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the redirect ended with HTTP %d", resp.StatusCode)
	}
	return nil
}

// personCookie is the authorization server's own session: who is logged
// in to it in a [Browser].
const personCookie = "testoauth_person"

// Browser is one person's browser: logged in to the authorization server
// as Person (what a code it authorizes is bound to, and whoami says),
// keeping every cookie it is set (a client's own pages' too) and
// following redirects, each of which it records in Visited; the
// Set-Cookie headers it is sent are recorded in SetCookies.
type Browser struct {
	*http.Client
	Person string

	mu         sync.Mutex
	visited    []string
	setCookies []string
}

// recorder records the Set-Cookie headers of a [Browser]'s responses.
type recorder struct{ b *Browser }

func (rt recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		rt.b.mu.Lock()
		rt.b.setCookies = append(rt.b.setCookies, resp.Header.Values("Set-Cookie")...)
		rt.b.mu.Unlock()
	}
	return resp, err
}

// SetCookies are the Set-Cookie headers the browser was sent, in order.
func (b *Browser) SetCookies() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.setCookies...)
}

// Browser returns person's browser, logged in to s.
func (s *Server) Browser(person string) *Browser {
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(s.URL)
	jar.SetCookies(u, []*http.Cookie{{Name: personCookie, Value: person, Path: "/"}})
	b := &Browser{Person: person}
	b.Client = &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: recorder{b}, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		b.mu.Lock()
		b.visited = append(b.visited, req.URL.String())
		b.mu.Unlock()
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}}
	return b
}

// Visited are the URLs the browser was redirected to, in order.
func (b *Browser) Visited() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.visited...)
}

// verifyES256 checks a client assertion (RFC 7523): signature, iss and sub
// the client, aud the issuer, not expired.
func verifyES256(pub *ecdsa.PublicKey, jwt, clientID, aud string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return false
	}
	var h struct{ Alg string }
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if json.Unmarshal(hb, &h) != nil || h.Alg != "ES256" {
		return false
	}
	var c struct {
		Iss, Sub, Aud string
		Exp           int64
	}
	cb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if json.Unmarshal(cb, &c) != nil {
		return false
	}
	return c.Iss == clientID && c.Sub == clientID && c.Aud == aud && time.Now().Unix() < c.Exp
}

func random() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
