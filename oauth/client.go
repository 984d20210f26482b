package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// Options configure a [Client]. Server and Store are required; the zero
// value of every other field is the default.
type Options struct {
	// Server is the upstream's configuration; its Auth must be set.
	Server config.Server
	// Store holds the tokens. Owner is the bearer token's owner whose
	// credentials these are; "" is the user running the proxy.
	Store *Store
	Owner string
	// HTTPClient makes discovery, registration and token requests; nil is
	// a client with a 30 s timeout.
	HTTPClient *http.Client
	// LoginCommand is the command a person runs to log in, named by
	// every [LoginError]; "" is "scratchpad-mcp auth login NAME".
	LoginCommand string
	// Now is the clock (tests); nil is [time.Now].
	Now func() time.Time
	// Logger receives refreshes and step-ups, never a token; nil is
	// [slog.Default].
	Logger *slog.Logger
	// Web, when set, is how an owner logs in: through the server, whose
	// URL a [LoginError] then carries instead of LoginCommand.
	Web *WebLogins
}

// Client is the OAuth client of one upstream for one owner. It hands out
// access tokens ([Client.Token]), refreshes them before they expire and
// when the server refuses one, asks for more scope when the server says
// a request needs it, and runs the login ([Client.Login]). Its methods
// are safe for concurrent use; one refresh runs at a time, and the
// requests that need it wait for it.
type Client struct {
	opts Options
	cfg  config.Auth
	hc   *http.Client
	log  *slog.Logger

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a record is saved
	rec     *Record       // nil: none stored (or for another URL)
	recMod  time.Time     // the file's modification time when rec was read
	loaded  bool
}

// New returns the client of opts.Server.
func New(opts Options) *Client {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.LoginCommand == "" {
		opts.LoginCommand = "scratchpad-mcp auth login " + opts.Server.Name
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	c := &Client{opts: opts, hc: hc, log: opts.Logger.With("server", opts.Server.Name), changed: make(chan struct{})}
	if opts.Server.Auth != nil {
		c.cfg = *opts.Server.Auth
	}
	return c
}

// loginError is [ErrLoginRequired] for this server.
func (c *Client) loginError(format string, args ...any) error {
	return &LoginError{Server: c.opts.Server.Name, Reason: fmt.Sprintf(format, args...), Command: c.opts.LoginCommand}
}

// currentLocked is the stored record, read again when its file changed
// (a login in another process), or every time from Shared (another
// replica's refresh); c.mu is held. A record for another URL is none:
// its token is never sent to a server it was not issued for.
func (c *Client) currentLocked(ctx context.Context) (*Record, error) {
	st := c.opts.Store
	var mod time.Time
	if st.Shared == nil {
		mod = st.modTime(c.opts.Owner, c.opts.Server.Name)
		if c.loaded && mod.Equal(c.recMod) {
			return c.rec, nil
		}
	}
	rec, err := st.Load(ctx, c.opts.Owner, c.opts.Server.Name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		rec = nil
	case err != nil:
		return nil, err
	case rec.URL != c.opts.Server.URL:
		rec = nil
	}
	c.rec, c.recMod, c.loaded = rec, mod, true
	return rec, nil
}

// saveLocked stores rec as the current record; c.mu is held.
func (c *Client) saveLocked(ctx context.Context, rec *Record) error {
	st := c.opts.Store
	if err := st.Save(ctx, c.opts.Owner, c.opts.Server.Name, rec); err != nil {
		return err
	}
	c.rec, c.loaded = rec, true
	if st.Shared == nil {
		c.recMod = st.modTime(c.opts.Owner, c.opts.Server.Name)
	}
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// Changed is closed when this client stores new credentials (a login, a
// refresh); a record another process (or replica) writes is not seen
// here, but at the next request.
func (c *Client) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// Recheck reads the stored record again and, when it now holds a token
// this client did not have, wakes the waiters of [Client.Changed]: a
// login another replica completed (the record is on the shared store) is
// then used at once rather than at the waiter's next poll.
func (c *Client) Recheck(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	had := ""
	if c.rec != nil {
		had = c.rec.Token.AccessToken
	}
	rec, err := c.currentLocked(ctx)
	if err != nil || rec == nil || rec.Token.AccessToken == "" || rec.Token.AccessToken == had {
		return
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// maxSkew is how long before its expiry a token is refreshed: a request
// must not leave with a token that expires on its way.
const maxSkew = 30 * time.Second

// fresh reports whether t can be sent: not expired nor about to. A
// short-lived token is refreshed after three quarters of its life, so
// that it is used at all.
func (c *Client) fresh(t Token) bool {
	if t.AccessToken == "" {
		return false
	}
	if t.Expiry.IsZero() {
		return true
	}
	skew := maxSkew
	if life := t.Expiry.Sub(t.Obtained); life > 0 && life/4 < skew {
		skew = life / 4
	}
	return c.opts.Now().Add(skew).Before(t.Expiry)
}

// Token returns an access token for the server: the stored one while it
// is fresh, else a refreshed one (authorization code) or a new one
// (client credentials). Without a way to get one it returns a
// [*LoginError].
func (c *Client) Token(ctx context.Context) (string, error) {
	c.mu.Lock()
	tok, err := c.tokenLocked(ctx, "")
	c.mu.Unlock()
	return tok, c.withWebLogin(ctx, err)
}

// refused is Token after the server answered 401 to refusedTok: that one
// is not handed out again (unless the store has a newer one already).
func (c *Client) refused(ctx context.Context, refusedTok string) (string, error) {
	c.mu.Lock()
	tok, err := c.tokenLocked(ctx, refusedTok)
	c.mu.Unlock()
	return tok, c.withWebLogin(ctx, err)
}

func (c *Client) tokenLocked(ctx context.Context, refused string) (string, error) {
	rec, err := c.currentLocked(ctx)
	if err != nil {
		return "", err
	}
	if rec != nil && rec.Token.AccessToken != refused && c.fresh(rec.Token) {
		return rec.Token.AccessToken, nil
	}
	if c.opts.Store.Shared != nil && c.asksServer(rec) {
		// One replica at a time asks the authorization server: a rotated
		// refresh token is good once, so two refreshing at once would
		// leave one of them refused. The one that waited reads the record
		// again, and uses the token the other got.
		unlock, err := c.opts.Store.lock(ctx, c.opts.Owner, c.opts.Server.Name)
		if err != nil {
			return "", err
		}
		defer unlock()
		if rec, err = c.currentLocked(ctx); err != nil {
			return "", err
		}
		if rec != nil && rec.Token.AccessToken != refused && c.fresh(rec.Token) {
			c.log.Debug("another replica got the OAuth token")
			return rec.Token.AccessToken, nil
		}
	}
	if c.cfg.Grant == config.GrantClientCredentials {
		return c.clientCredentialsLocked(ctx, rec)
	}
	if rec == nil {
		return "", c.loginError("not logged in")
	}
	if rec.Refused != "" {
		return "", c.loginError("%s", rec.Refused)
	}
	if rec.Token.RefreshToken == "" {
		if refused != "" {
			return "", c.loginError("the server refused the token, and there is no refresh token")
		}
		return "", c.loginError("the token expired, and there is no refresh token")
	}
	return c.refreshLocked(ctx, rec)
}

// asksServer reports whether getting a token for rec needs a token
// request (client credentials, or a refresh), rather than a person.
func (c *Client) asksServer(rec *Record) bool {
	return c.cfg.Grant == config.GrantClientCredentials || rec != nil && rec.Refused == "" && rec.Token.RefreshToken != ""
}

// refreshLocked trades the refresh token for a new access token (OAuth
// 2.1 §4.3) and stores both. A refresh token the server refuses (revoked,
// expired, the client gone) needs a new login; any other failure (the
// server unreachable) is returned as it is, for the call to fail and the
// next to try again.
func (c *Client) refreshLocked(ctx context.Context, rec *Record) (string, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rec.Token.RefreshToken}}
	if rec.Resource != "" {
		form.Set("resource", rec.Resource)
	}
	tok, err := tokenRequest(ctx, c.hc, rec.TokenEndpoint, form, rec.Client, nil, c.opts.Now())
	var te *TokenError
	if errors.As(err, &te) && (te.Code == "invalid_grant" || te.Code == "invalid_client" || te.Code == "unauthorized_client" || te.Status == http.StatusUnauthorized) {
		c.log.Warn("the authorization server refused the refresh token; a new login is needed", "error", te.Code)
		reason := fmt.Sprintf("the authorization server refused the refresh token: %v", te)
		next := *rec
		next.Token, next.Refused = Token{}, reason
		if err := c.saveLocked(ctx, &next); err != nil {
			c.log.Warn("could not record the refused refresh token", "error", err)
		}
		return "", c.loginError("%s", reason)
	}
	if err != nil {
		return "", fmt.Errorf("refreshing the OAuth token of upstream %q at %s: %w", c.opts.Server.Name, config.RedactURL(rec.TokenEndpoint), err)
	}
	if tok.RefreshToken == "" {
		tok.RefreshToken = rec.Token.RefreshToken // not rotated: still valid
	}
	if tok.Scope == "" {
		tok.Scope = rec.Token.Scope
	}
	next := *rec
	next.Token = *tok
	if err := c.saveLocked(ctx, &next); err != nil {
		return "", err
	}
	c.log.Info("OAuth token refreshed", "expires", tok.Expiry.Format(time.RFC3339))
	return tok.AccessToken, nil
}

// clientCredentialsLocked gets a token with the client_credentials grant
// (a service acting for itself, no person involved), discovering the
// authorization server first when nothing is stored.
func (c *Client) clientCredentialsLocked(ctx context.Context, rec *Record) (string, error) {
	if rec != nil {
		r := *rec // c.rec is not changed until the new one is saved
		rec = &r
	}
	if rec == nil || rec.TokenEndpoint == "" || rec.Grant != config.GrantClientCredentials {
		d, ch, err := c.discover(ctx)
		if err != nil {
			return "", err
		}
		client, err := identify(ctx, c.hc, &c.cfg, &d.AS, "", nil)
		if err != nil {
			return "", err
		}
		rec = &Record{
			URL: c.opts.Server.URL, Resource: d.Resource, Issuer: d.AS.Issuer,
			TokenEndpoint: d.AS.TokenEndpoint, RevocationEndpoint: d.AS.RevocationEndpoint,
			Client: client, Grant: config.GrantClientCredentials,
			Scopes: selectScopes(ch, d.PRM, c.cfg.Scopes, nil),
		}
	}
	var sign signer
	if c.cfg.PrivateKeyFile != "" {
		s, err := loadSigner(c.cfg.PrivateKeyFile, c.cfg.SigningAlgorithm, c.opts.Now)
		if err != nil {
			return "", fmt.Errorf("upstream %q: %w", c.opts.Server.Name, err)
		}
		// The audience is the authorization server's issuer identifier,
		// as RFC 7523bis (and the MCP client-credentials extension)
		// asks; the token endpoint when the issuer is unknown.
		issuer := rec.Issuer
		sign = func(clientID, tokenEndpoint string) (string, error) {
			if issuer == "" {
				return s(clientID, tokenEndpoint)
			}
			return s(clientID, issuer)
		}
	}
	// The secret may have changed in the config since it was stored.
	rec.Client.ID, rec.Client.Secret = c.cfg.ClientID, c.cfg.ClientSecret
	form := url.Values{"grant_type": {"client_credentials"}}
	if rec.Resource != "" {
		form.Set("resource", rec.Resource)
	}
	if len(rec.Scopes) > 0 {
		form.Set("scope", strings.Join(rec.Scopes, " "))
	}
	tok, err := tokenRequest(ctx, c.hc, rec.TokenEndpoint, form, rec.Client, sign, c.opts.Now())
	if err != nil {
		return "", fmt.Errorf("upstream %q: client_credentials token request to %s: %w", c.opts.Server.Name, config.RedactURL(rec.TokenEndpoint), err)
	}
	next := *rec
	next.Token = *tok
	// The secret stays in the config: the store holds what was issued.
	next.Client.Secret = ""
	if err := c.saveLocked(ctx, &next); err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// stepUp answers a 403 insufficient_scope challenge (the specification's
// step-up authorization): the scopes the server asks for are added to
// the record, so that every later token, and the next login, asks for
// them. A client_credentials client gets the new token at once; a person
// must log in again.
func (c *Client) stepUp(ctx context.Context, ch Challenge) (string, error) {
	tok, err := c.askScope(ctx, ch)
	return tok, c.withWebLogin(ctx, err)
}

// askScope is stepUp but for the web login.
func (c *Client) askScope(ctx context.Context, ch Challenge) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec, err := c.currentLocked(ctx)
	if err != nil {
		return "", err
	}
	if rec == nil {
		return c.tokenLocked(ctx, "")
	}
	next := *rec
	next.Scopes = union(rec.Scopes, strings.Fields(ch.Scope))
	c.log.Info("the server asks for more scope", "scope", ch.Scope)
	if c.cfg.Grant == config.GrantClientCredentials {
		return c.clientCredentialsLocked(ctx, &next)
	}
	if err := c.saveLocked(ctx, &next); err != nil {
		return "", err
	}
	return "", c.loginError("the server asks for scope %q", ch.Scope)
}

// discover probes the server for its challenge and runs discovery.
func (c *Client) discover(ctx context.Context) (*Discovery, Challenge, error) {
	ch := c.probe(ctx)
	d, err := discover(ctx, c.hc, c.opts.Server.URL, ch)
	if err != nil {
		return nil, ch, fmt.Errorf("upstream %q: %w", c.opts.Server.Name, err)
	}
	return d, ch, nil
}

// probe sends the server an unauthorized MCP request (an initialize for
// streamable HTTP, the stream's GET for SSE) and returns the challenge of
// its 401: where its metadata is, and the scope it wants. Anything else
// (no 401, the server down) is an empty challenge: the well-known URLs
// are tried then.
func (c *Client) probe(ctx context.Context) Challenge {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var req *http.Request
	var err error
	if c.opts.Server.Transport == config.TransportSSE {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, c.opts.Server.URL, nil)
		if err == nil {
			req.Header.Set("Accept", "text/event-stream")
		}
	} else {
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + ProtocolVersion +
			`","capabilities":{},"clientInfo":{"name":"` + clientName + `","version":"0"}}}`
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.opts.Server.URL, bytes.NewReader([]byte(body)))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
	}
	if err != nil {
		return Challenge{}
	}
	for k, v := range c.opts.Server.Headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Challenge{}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return Challenge{}
	}
	ch, _ := ParseChallenge(resp.Header)
	return ch
}

// selectScopes is the scope of an authorization, in the specification's
// order: the challenge's scope, else the resource's scopes_supported,
// else none; with the configured scopes and those earlier step-ups asked
// for added.
func selectScopes(ch Challenge, prm ResourceMetadata, configured, earlier []string) []string {
	base := strings.Fields(ch.Scope)
	if len(base) == 0 {
		base = prm.ScopesSupported
	}
	return union(union(base, configured), earlier)
}

// union is a with b's elements it lacks appended, in order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// sameOrigin compares scheme and host (with port) of two URLs.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(hostPort(a), hostPort(b))
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return net.JoinHostPort(u.Hostname(), "443")
	case "http":
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return u.Host
}
