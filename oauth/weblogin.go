package oauth

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// CallbackPath is where [WebLogins] wants the redirects: the path of its
// RedirectURL on the server's own HTTP listener.
const CallbackPath = "/oauth/callback"

// webLoginTTL is how long a login begun through the server waits for its
// redirect, and how long the same URL is handed out again to the calls
// that need it: one login per owner and server at a time, not one per
// call.
const webLoginTTL = 10 * time.Minute

// WebLogins are logins through the server itself, for owners of bearer
// tokens: they cannot run `auth login` on the server's machine, and the
// redirect cannot reach a loopback listener there. A [Client] with
// [Options].Web, lacking a token, begins a login whose redirect is
// RedirectURL (the server's /oauth/callback) and puts its URL in the
// [LoginError]; the owner opens it, and [WebLogins.ServeHTTP] completes
// it: the state names the one pending login, and so the owner whose
// token it becomes (state is random, unguessable, and good once).
type WebLogins struct {
	// OnComplete, when set (before the first login), is told of each
	// login that came back and was stored: owner, server, and the URL
	// that was handed out.
	OnComplete func(owner, server, authURL string)

	mu          sync.Mutex
	redirectURL string
	byState     map[string]*pending
	byClient    map[*Client]*pending
}

// NewWebLogins returns the logins of a server whose redirect URL (its
// public URL followed by [CallbackPath]) is redirectURL.
func NewWebLogins(redirectURL string) *WebLogins {
	return &WebLogins{redirectURL: redirectURL, byState: map[string]*pending{}, byClient: map[*Client]*pending{}}
}

// SetRedirectURL sets where the redirects come back (known once the
// server listens).
func (w *WebLogins) SetRedirectURL(u string) {
	w.mu.Lock()
	w.redirectURL = u
	w.mu.Unlock()
}

// url is the authorization URL of c's login: the one pending when it is
// young, else a new one.
func (w *WebLogins) url(ctx context.Context, c *Client, earlier []string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expireLocked(c.opts.Now())
	if p := w.byClient[c]; p != nil {
		return p.authURL, nil
	}
	if w.redirectURL == "" {
		return "", errors.New("the server has no URL for the redirect yet")
	}
	p, err := c.begin(ctx, w.redirectURL, earlier)
	if err != nil {
		return "", err
	}
	w.byState[p.state], w.byClient[c] = p, p
	return p.authURL, nil
}

func (w *WebLogins) expireLocked(now time.Time) {
	for s, p := range w.byState {
		if now.Sub(p.started) > webLoginTTL {
			delete(w.byState, s)
			delete(w.byClient, p.c)
		}
	}
}

// ServeHTTP is the redirect's landing ([CallbackPath]): it completes the
// login the state names and stores its token for that login's owner. It
// needs no bearer token (a browser has none): the state is the proof.
func (w *WebLogins) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	state := r.URL.Query().Get("state")
	w.mu.Lock()
	p := w.byState[state]
	if p != nil {
		delete(w.byState, state)
		delete(w.byClient, p.c)
	}
	w.mu.Unlock()
	if p == nil || state == "" {
		http.Error(rw, "unknown or expired login: call the tool again for a new login URL", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := p.complete(ctx, r.URL.Query()); err != nil {
		p.c.log.Warn("OAuth login through the server failed", "error", err)
		code := r.URL.Query().Get("error")
		if code == "" {
			code = "the code could not be exchanged"
			if errors.Is(err, ErrAuthorization) {
				code = "the redirect did not match the login"
			}
		}
		writeDone(rw, p.c.opts.Server.Name, code)
		return
	}
	p.c.log.Info("OAuth login through the server completed")
	writeDone(rw, p.c.opts.Server.Name, "")
	if w.OnComplete != nil {
		w.OnComplete(p.c.opts.Owner, p.c.opts.Server.Name, p.authURL)
	}
}

// withWebLogin gives a [LoginError] the URL of a login through the
// server, when the client has [Options].Web. A login that cannot begin
// (discovery failed) says why in the error instead.
func (c *Client) withWebLogin(ctx context.Context, err error) error {
	le, ok := err.(*LoginError)
	if !ok || c.opts.Web == nil {
		return err
	}
	u, werr := c.opts.Web.url(ctx, c, c.earlierScopes())
	if werr != nil {
		le.Reason += "; starting a login failed: " + werr.Error()
		return le
	}
	le.URL = u
	return le
}
