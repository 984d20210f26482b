package oauth

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// LoginOptions configure [Client.Login]. The zero value opens the
// system's browser and prints nothing.
type LoginOptions struct {
	// Open opens the authorization URL for the person logging in; nil is
	// [OpenBrowser]. An error is printed, and the login waits on: the
	// printed URL can be opened by hand.
	Open func(authURL string) error
	// Out receives the authorization URL and what happens; nil discards.
	Out io.Writer
}

// callbackPath is the loopback redirect's path.
const callbackPath = "/callback"

// pending is an authorization begun and not come back yet: what the
// redirect's code is exchanged with.
type pending struct {
	c           *Client
	d           *Discovery
	client      Identity
	scopes      []string
	verifier    string
	state       string
	redirectURI string
	authURL     string
	started     time.Time
}

// begin prepares an authorization for the redirect redirectURI:
// discovery (from the server's 401 challenge), PKCE support checked, the
// scope chosen (earlier: scopes step-ups asked for), the client identity
// (configured, metadata document or dynamic registration), the
// authorization URL.
func (c *Client) begin(ctx context.Context, redirectURI string, earlier []string) (*pending, error) {
	d, ch, err := c.discover(ctx)
	if err != nil {
		return nil, err
	}
	if !supportsS256(&d.AS) {
		return nil, fmt.Errorf("upstream %q: %w: authorization server %s does not list S256 in code_challenge_methods_supported, and the MCP specification forbids authorizing without PKCE",
			c.opts.Server.Name, ErrDiscovery, config.RedactURL(d.AS.Issuer))
	}
	if d.AS.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("upstream %q: %w: authorization server %s has no authorization_endpoint", c.opts.Server.Name, ErrDiscovery, config.RedactURL(d.AS.Issuer))
	}
	scopes := selectScopes(ch, d.PRM, c.cfg.Scopes, earlier)
	client, err := identify(ctx, c.hc, &c.cfg, &d.AS, redirectURI, scopes)
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", c.opts.Server.Name, err)
	}
	p := &pending{c: c, d: d, client: client, scopes: scopes, verifier: newVerifier(), state: randomString(24), redirectURI: redirectURI, started: c.opts.Now()}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {client.ID},
		"redirect_uri":          {redirectURI},
		"code_challenge":        {challengeS256(p.verifier)},
		"code_challenge_method": {"S256"},
		"state":                 {p.state},
		"resource":              {d.Resource},
	}
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	if p.authURL, err = withQuery(d.AS.AuthorizationEndpoint, q); err != nil {
		return nil, fmt.Errorf("upstream %q: %w: authorization_endpoint: %v", c.opts.Server.Name, ErrDiscovery, err)
	}
	return p, nil
}

// complete takes the redirect's query (its state already matched) and
// stores the token the code is exchanged for.
func (p *pending) complete(ctx context.Context, qv url.Values) error {
	c := p.c
	if e := qv.Get("error"); e != "" {
		msg := e
		if desc := qv.Get("error_description"); desc != "" {
			msg += ": " + desc
		}
		return fmt.Errorf("upstream %q: %w: the authorization server answered %s", c.opts.Server.Name, ErrAuthorization, msg)
	}
	// RFC 9207: when the server says who it is, it must be the one
	// asked (a mix-up attack sends another server's code).
	if iss := qv.Get("iss"); iss != "" && iss != p.d.AS.Issuer || iss == "" && p.d.AS.AuthorizationResponseIssParameterSupported {
		return fmt.Errorf("upstream %q: %w: the redirect's iss %q is not the authorization server %q", c.opts.Server.Name, ErrAuthorization, config.RedactURL(iss), config.RedactURL(p.d.AS.Issuer))
	}
	code := qv.Get("code")
	if code == "" {
		return fmt.Errorf("upstream %q: %w: the redirect carries no code", c.opts.Server.Name, ErrAuthorization)
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {p.redirectURI},
		"code_verifier": {p.verifier},
		"resource":      {p.d.Resource},
	}
	tok, err := tokenRequest(ctx, c.hc, p.d.AS.TokenEndpoint, form, p.client, nil, c.opts.Now())
	if err != nil {
		return fmt.Errorf("upstream %q: exchanging the code at %s: %w", c.opts.Server.Name, config.RedactURL(p.d.AS.TokenEndpoint), err)
	}
	if tok.Scope == "" {
		tok.Scope = strings.Join(p.scopes, " ")
	}
	rec := &Record{
		URL: c.opts.Server.URL, Resource: p.d.Resource, Issuer: p.d.AS.Issuer,
		AuthorizationEndpoint: p.d.AS.AuthorizationEndpoint, TokenEndpoint: p.d.AS.TokenEndpoint, RevocationEndpoint: p.d.AS.RevocationEndpoint,
		Client: p.client, Scopes: p.scopes, Grant: config.GrantAuthorizationCode, Token: *tok,
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.saveLocked(ctx, rec)
}

// earlierScopes are the scopes the stored record asked for (step-ups
// included).
func (c *Client) earlierScopes(ctx context.Context) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec, _ := c.currentLocked(ctx); rec != nil {
		return rec.Scopes
	}
	return nil
}

// Login runs the authorization code flow with PKCE for the server and
// stores the token: discovery, the client identity, the authorization
// URL opened in a browser, the redirect received on a loopback listener
// (RFC 8252 §7.3: 127.0.0.1, a port of the system's choosing), the code
// exchanged for tokens with the resource parameter. A client_credentials
// server needs no person: Login then gets its token at once, which
// checks the configuration. ctx bounds the whole login (a person who
// never comes back).
func (c *Client) Login(ctx context.Context, lo LoginOptions) error {
	out := lo.Out
	if out == nil {
		out = io.Discard
	}
	if c.cfg.Grant == config.GrantClientCredentials {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, err := c.clientCredentialsLocked(ctx, nil)
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("loopback listener for the redirect: %w", err)
	}
	defer ln.Close()
	redirectURI := fmt.Sprintf("http://127.0.0.1:%d%s", ln.Addr().(*net.TCPAddr).Port, callbackPath)
	p, err := c.begin(ctx, redirectURI, c.earlierScopes(ctx))
	if err != nil {
		return err
	}

	got := make(chan url.Values, 1)
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != callbackPath {
				http.NotFound(w, r)
				return
			}
			qv := r.URL.Query()
			if qv.Get("state") != p.state {
				// Not this login's redirect (a stale tab, a forgery):
				// refused, and the login goes on waiting.
				http.Error(w, "unknown state: this is not the login in progress", http.StatusBadRequest)
				return
			}
			select {
			case got <- qv:
			default:
			}
			writeDone(w, c.opts.Server.Name, qv.Get("error"))
		}),
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	fmt.Fprintf(out, "To log in to %s, open this URL in a browser:\n\n  %s\n\nWaiting for the redirect to %s …\n", c.opts.Server.Name, p.authURL, redirectURI)
	open := lo.Open
	if open == nil {
		open = OpenBrowser
	}
	if err := open(p.authURL); err != nil {
		fmt.Fprintf(out, "(could not open a browser: %v; open the URL by hand)\n", err)
	}
	select {
	case qv := <-got:
		return p.complete(ctx, qv)
	case <-ctx.Done():
		return fmt.Errorf("upstream %q: %w: no redirect came back: %w", c.opts.Server.Name, ErrAuthorization, context.Cause(ctx))
	}
}

// writeDone is the page the browser lands on after the redirect.
func writeDone(w http.ResponseWriter, server, errCode string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if errCode != "" {
		fmt.Fprintf(w, "<!doctype html><title>scratchpad-mcp</title><p>Login to %s failed: %s. You can close this tab.</p>", html.EscapeString(server), html.EscapeString(errCode))
		return
	}
	fmt.Fprintf(w, "<!doctype html><title>scratchpad-mcp</title><p>Logged in to %s. You can close this tab.</p>", html.EscapeString(server))
}

// withQuery is endpoint with q added to the query it may already have.
func withQuery(endpoint string, q url.Values) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("%q is not an http(s) URL", config.RedactURL(endpoint))
	}
	all := u.Query()
	for k, vs := range q {
		all[k] = vs
	}
	u.RawQuery = all.Encode()
	return u.String(), nil
}
