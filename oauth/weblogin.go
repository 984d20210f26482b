package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The paths [WebLogins] serves on the server's own listener, under its
// public URL, without a bearer token (a browser has none).
const (
	// BeginPath is the page a login URL handed out opens: it shows
	// which owner and which upstream are being logged in, and asks for
	// proof of being that owner before sending the browser on to the
	// authorization server.
	BeginPath = "/oauth/begin"
	// CallbackPath is where the authorization server redirects back.
	CallbackPath = "/oauth/callback"
)

// The begin page's form fields: the login's id (also in the URL handed
// out) and the owner's scratchpad-mcp bearer token.
const (
	BeginLoginField = "login"
	BeginTokenField = "token"
)

// webLoginTTL is how long a login begun through the server waits for its
// redirect, and how long the same URL is handed out again to the calls
// that need it: one login per owner and server at a time, not one per
// call.
const webLoginTTL = 10 * time.Minute

// maxProofBytes bounds the begin page's form: an id and a token.
const maxProofBytes = 16 << 10

// ErrWebLoginUnbound is why [WebLogins] refuses a redirect that comes back
// to a browser which did not prove, on the begin page, that it is the
// owner's: a person holding only the login URL (it passes through the
// model, its provider, logs) cannot make their login the owner's.
var ErrWebLoginUnbound = errors.New("this browser did not prove it is the owner's")

// WebLogins are logins through the server itself, for owners of bearer
// tokens: they cannot run `auth login` on the server's machine, and the
// redirect cannot reach a loopback listener there. A [Client] with
// [Options].Web, lacking a token, begins a login and puts the URL of its
// begin page ({base}[BeginPath]?login=ID) in the [LoginError].
//
// A login is bound to its owner, not to whoever holds its URL: the begin
// page names the owner and the upstream and asks for the owner's
// scratchpad-mcp bearer token ([WebLogins].TokenOwner checks it; a POST,
// cross-origin requests refused). Proven, the browser gets a cookie
// (HttpOnly, SameSite=Lax, Secure with an https base) holding a random
// secret whose SHA-256 the login keeps, and is sent to the authorization
// server; the redirect back ([CallbackPath]) completes the login only
// with that cookie. The OAuth state (random, good once) still names the
// one pending login; neither it, the code, the cookie nor the token is
// ever logged or put in an error, and the authorization URL (which holds
// the state) is only ever sent to the proven browser.
type WebLogins struct {
	// OnComplete, when set (before the first login), is told of each
	// login that came back and was stored: owner, server, and the URL
	// that was handed out.
	OnComplete func(owner, server, loginURL string)
	// TokenOwner names the owner of a scratchpad-mcp bearer token, ok
	// false when no owner has it: the begin page's proof. It must
	// compare in constant time and log nothing of the token. nil refuses
	// every proof.
	TokenOwner func(token string) (owner string, ok bool)
	// Store, when its Shared is set (replicas, [cluster] redis_url),
	// keeps the pending logins instead of this process's memory, sealed
	// with its key: a login begun on one replica is shown, proven and
	// completed on any (weblogin_shared.go). Set before the first login.
	Store *Store
	// Clients gives, on the replica a shared login comes back to, the
	// client of owner's server that exchanges the code and stores the
	// token (through Store, so every replica sees it); ok false when
	// this replica has no such server. Needed with Store.Shared only.
	Clients func(owner, server string) (*Client, bool)
	// Logger receives what a shared login does where no client of its
	// own is at hand (the begin page and the proof on another replica);
	// nil is [slog.Default]. Never a secret.
	Logger *slog.Logger

	// now is the clock of shared logins' expiry (tests); nil is time.Now.
	now func() time.Time

	mu       sync.Mutex
	base     *url.URL // the server's public URL; nil until known
	byState  map[string]*webLogin
	byID     map[string]*webLogin
	byClient map[*Client]*webLogin
	// refusals counts refused proofs and redirects of shared logins by
	// id, on this replica (see webLogin.refused).
	refusals map[string]refusal
}

// webLogin is one login begun through the server. A shared one (read
// from Store.Shared) has no client in its pending: the replica holding
// it may not be the one that began it.
type webLogin struct {
	*pending
	id            string // names it on the begin page; not a secret
	url           string // handed out: base + BeginPath + ?login=id
	owner, server string
	// binding is the SHA-256 of the secret in the proven browser's
	// cookie; proved says there is one.
	binding [sha256.Size]byte
	proved  bool
	// refused counts refused proofs and redirects: the first is a
	// warning, the rest debug lines (someone holding the URL cannot
	// fill the log).
	refused int
}

// noteRefused logs a refused proof or redirect of l.
func (w *WebLogins) noteRefused(l *webLogin, msg string, args ...any) {
	w.mu.Lock()
	var n int
	if w.shared() != nil {
		n = w.refusedLocked(l.id)
	} else {
		l.refused++
		n = l.refused
	}
	w.mu.Unlock()
	args = append(args, "refused", n)
	if n == 1 {
		w.logOf(l).Warn(msg, args...)
		return
	}
	w.logOf(l).Debug(msg, args...)
}

// logOf is the logger of l's steps: its client's, else Logger's with the
// owner and server.
func (w *WebLogins) logOf(l *webLogin) *slog.Logger {
	if l.pending != nil && l.c != nil {
		return l.c.log
	}
	log := w.Logger
	if log == nil {
		log = slog.Default()
	}
	return log.With("server", l.server, "owner", l.owner)
}

// NewWebLogins returns the logins of a server reached (by owners'
// browsers) at base: its public URL, or "" until it is known
// ([WebLogins.SetBaseURL]).
func NewWebLogins(base string) *WebLogins {
	w := &WebLogins{byState: map[string]*webLogin{}, byID: map[string]*webLogin{}, byClient: map[*Client]*webLogin{}}
	if base != "" {
		_ = w.SetBaseURL(base)
	}
	return w
}

// SetBaseURL sets the server's URL as owners' browsers reach it (known
// once the server listens): logins are begun at base + [BeginPath] and
// come back to base + [CallbackPath].
func (w *WebLogins) SetBaseURL(base string) error {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("the server's URL %q is not an http(s) URL", base)
	}
	u.RawQuery, u.Fragment = "", ""
	w.mu.Lock()
	w.base = u
	w.mu.Unlock()
	return nil
}

// RedirectURL is where the authorization server sends the browser back:
// base + [CallbackPath]; "" until the base is known.
func (w *WebLogins) RedirectURL() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.urlLocked(CallbackPath)
}

func (w *WebLogins) urlLocked(path string) string {
	if w.base == nil {
		return ""
	}
	return w.base.String() + path
}

// url is the URL handed out for c's login: the one pending when it is
// young, else a new one.
func (w *WebLogins) url(ctx context.Context, c *Client, earlier []string) (string, error) {
	if st := w.shared(); st != nil {
		return w.sharedURL(ctx, st, c, earlier)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expireLocked(c.opts.Now())
	if l := w.byClient[c]; l != nil {
		return l.url, nil
	}
	if w.base == nil {
		return "", errors.New("the server has no URL for the redirect yet")
	}
	p, err := c.begin(ctx, w.urlLocked(CallbackPath), earlier)
	if err != nil {
		return "", err
	}
	l := &webLogin{pending: p, id: randomString(18), owner: c.opts.Owner, server: c.opts.Server.Name}
	l.url = w.beginURLLocked(l.id)
	w.byState[p.state], w.byID[l.id], w.byClient[c] = l, l, l
	return l.url, nil
}

// beginURLLocked is the URL handed out for the login id.
func (w *WebLogins) beginURLLocked(id string) string {
	return w.urlLocked(BeginPath) + "?" + url.Values{BeginLoginField: {id}}.Encode()
}

func (w *WebLogins) expireLocked(now time.Time) {
	for s, l := range w.byState {
		if now.Sub(l.started) > webLoginTTL {
			w.dropLocked(s, l)
		}
	}
}

func (w *WebLogins) dropLocked(state string, l *webLogin) {
	delete(w.byState, state)
	delete(w.byID, l.id)
	delete(w.byClient, l.c)
}

// ServeHTTP serves [BeginPath] and [CallbackPath]. Neither needs a
// bearer token: the begin page asks for it in its form, and the redirect
// back is proven by the cookie the begin page set.
func (w *WebLogins) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Cache-Control", "no-store")
	rw.Header().Set("Referrer-Policy", "no-referrer")
	rw.Header().Set("X-Frame-Options", "DENY")
	rw.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; base-uri 'none'")
	switch r.URL.Path {
	case BeginPath:
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			w.beginPage(rw, r)
		case http.MethodPost:
			w.prove(rw, r)
		default:
			rw.Header().Set("Allow", "GET, POST")
			http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
		}
	case CallbackPath:
		w.callback(rw, r)
	default:
		http.NotFound(rw, r)
	}
}

// lookup is the live login named id, or nil; an error is the shared
// store's (Redis away, another sealing key).
func (w *WebLogins) lookup(ctx context.Context, id string, now time.Time) (*webLogin, error) {
	if st := w.shared(); st != nil {
		return w.loadShared(ctx, st, id)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expireLocked(now)
	if id == "" {
		return nil, nil
	}
	return w.byID[id], nil
}

const unknownLogin = "unknown or expired login: call the tool again for a new login URL"

// stepTimeout bounds what one browser request waits for the shared store
// (a lock a dead replica held expires later, and the browser is better
// told to try again).
const stepTimeout = 15 * time.Second

// beginPage shows who is being logged in where, and the form that proves
// it is that owner.
func (w *WebLogins) beginPage(rw http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), stepTimeout)
	defer cancel()
	l, err := w.lookup(ctx, r.URL.Query().Get(BeginLoginField), w.clock())
	if err != nil {
		w.sharedFailed(rw, "the begin page", err)
		return
	}
	if l == nil {
		writePage(rw, http.StatusBadRequest, "Login not found", "<p>"+html.EscapeString(unknownLogin)+".</p>")
		return
	}
	w.mu.Lock()
	action := w.urlLocked(BeginPath)
	w.mu.Unlock()
	as := l.d.AS.Issuer
	if u, err := url.Parse(as); err == nil && u.Host != "" {
		as = u.Host
	}
	body := fmt.Sprintf(`<h1>Log in to %[1]s for owner %[2]s</h1>
<p>scratchpad-mcp asks you to log in to the upstream server <b>%[1]s</b> at <b>%[3]s</b>. What you authorize there is used for the calls of the scratchpad-mcp owner <b>%[2]s</b>, and only theirs.</p>
<p>Only %[2]s can continue: paste %[2]s's scratchpad-mcp bearer token (the one their MCP client sends). If you are not %[2]s, or did not ask for this login, close this tab: whoever completes it decides whose account %[2]s's calls use.</p>
<form method="post" action="%[4]s">
<input type="hidden" name="%[5]s" value="%[6]s">
<p><label>Bearer token of %[2]s: <input type="password" name="%[7]s" autocomplete="off" required></label></p>
<p><button type="submit">Continue to %[3]s</button></p>
</form>`, html.EscapeString(l.server), html.EscapeString(l.owner), html.EscapeString(as),
		html.EscapeString(action), BeginLoginField, html.EscapeString(l.id), BeginTokenField)
	writePage(rw, http.StatusOK, "Log in to "+l.server, body)
}

// prove checks the begin form's token against the login's owner; proven,
// it binds the login to a new cookie and sends the browser on to the
// authorization server.
func (w *WebLogins) prove(rw http.ResponseWriter, r *http.Request) {
	if err := w.crossOrigin().Check(r); err != nil {
		writePage(rw, http.StatusForbidden, "Refused", "<p>Cross-origin request refused: open the login URL itself.</p>")
		return
	}
	r.Body = http.MaxBytesReader(rw, r.Body, maxProofBytes)
	if err := r.ParseForm(); err != nil {
		writePage(rw, http.StatusBadRequest, "Refused", "<p>The form could not be read.</p>")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), stepTimeout)
	defer cancel()
	now := w.clock()
	l, err := w.lookup(ctx, r.PostForm.Get(BeginLoginField), now)
	if err != nil {
		w.sharedFailed(rw, "the proof", err)
		return
	}
	if l == nil {
		writePage(rw, http.StatusBadRequest, "Login not found", "<p>"+html.EscapeString(unknownLogin)+".</p>")
		return
	}
	owner, ok := "", false
	if w.TokenOwner != nil {
		owner, ok = w.TokenOwner(r.PostForm.Get(BeginTokenField))
	}
	if !ok || owner != l.owner {
		w.noteRefused(l, "OAuth login through the server: the begin page's proof was refused (not the owner's bearer token)", "remote", r.RemoteAddr)
		writePage(rw, http.StatusForbidden, "Refused", fmt.Sprintf("<p>That is not the bearer token of %s: only %[1]s can complete this login.</p>", html.EscapeString(l.owner)))
		return
	}
	secret := randomString(32)
	// A second proof (another tab, another browser of the owner's)
	// replaces the first: the last proven browser completes it.
	binding := sha256.Sum256([]byte(secret))
	var ck *http.Cookie
	if st := w.shared(); st != nil {
		bound, err := w.bindShared(ctx, st, l, binding, now)
		if err != nil {
			w.sharedFailed(rw, "the proof", err)
			return
		}
		if !bound {
			writePage(rw, http.StatusBadRequest, "Login not found", "<p>"+html.EscapeString(unknownLogin)+".</p>")
			return
		}
		w.mu.Lock()
		ck = w.cookieLocked(l)
		w.mu.Unlock()
	} else {
		w.mu.Lock()
		if w.byID[l.id] != l {
			w.mu.Unlock()
			writePage(rw, http.StatusBadRequest, "Login not found", "<p>"+html.EscapeString(unknownLogin)+".</p>")
			return
		}
		l.binding, l.proved = binding, true
		ck = w.cookieLocked(l)
		w.mu.Unlock()
	}
	ck.Value = secret
	ck.MaxAge = max(1, int((webLoginTTL - now.Sub(l.started)).Seconds()))
	http.SetCookie(rw, ck)
	w.logOf(l).Info("OAuth login through the server: the owner proved who they are; sent to the authorization server")
	http.Redirect(rw, r, l.authURL, http.StatusSeeOther)
}

// crossOrigin refuses cross-origin form posts: those the browser marks
// (Sec-Fetch-Site) or whose Origin is neither the request's host nor
// the server's public URL.
func (w *WebLogins) crossOrigin() *http.CrossOriginProtection {
	cop := http.NewCrossOriginProtection()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.base != nil {
		_ = cop.AddTrustedOrigin(w.base.Scheme + "://" + w.base.Host)
	}
	return cop
}

// cookieLocked is the cookie that binds l to the proven browser, without
// its value: its own name (two logins at once do not meet), HttpOnly,
// SameSite=Lax (the redirect back is a top-level navigation from the
// authorization server), Secure and __Host- with an https base, else
// limited to the callback's path.
func (w *WebLogins) cookieLocked(l *webLogin) *http.Cookie {
	ck := &http.Cookie{Name: "spm-login-" + l.id, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	switch {
	case w.base != nil && w.base.Scheme == "https":
		ck.Name, ck.Path, ck.Secure = "__Host-"+ck.Name, "/", true
	case w.base != nil:
		ck.Path = w.base.Path + CallbackPath
	default:
		ck.Path = CallbackPath
	}
	return ck
}

// boundLocked reports whether r carries the cookie of l's proven
// browser (compared by its SHA-256, in constant time).
func (w *WebLogins) boundLocked(r *http.Request, l *webLogin) bool {
	got, err := r.Cookie(w.cookieLocked(l).Name)
	if err != nil || !l.proved {
		return false
	}
	sum := sha256.Sum256([]byte(got.Value))
	return subtle.ConstantTimeCompare(sum[:], l.binding[:]) == 1
}

// callback is the redirect's landing: it completes the login the state
// names, when the browser holds that login's cookie, and stores the
// token for the login's owner.
func (w *WebLogins) callback(rw http.ResponseWriter, r *http.Request) {
	qv := r.URL.Query()
	state := qv.Get("state")
	var l *webLogin
	bound := false
	if st := w.shared(); st != nil {
		ctx, cancel := context.WithTimeout(r.Context(), stepTimeout)
		var err error
		l, bound, err = w.takeShared(ctx, st, state, r)
		cancel()
		if err != nil {
			w.sharedFailed(rw, "the redirect back", err)
			return
		}
	} else {
		w.mu.Lock()
		w.expireLocked(w.clock())
		l = w.byState[state]
		if l != nil && state != "" {
			bound = w.boundLocked(r, l)
			if bound {
				// Good once: the state and the binding go together.
				w.dropLocked(state, l)
			}
		}
		w.mu.Unlock()
	}
	if l == nil || state == "" {
		writePage(rw, http.StatusBadRequest, "Login not found", "<p>"+html.EscapeString(unknownLogin)+".</p>")
		return
	}
	if !bound {
		// Not consumed: the owner's own browser may still come back.
		w.noteRefused(l, "OAuth login through the server: a redirect came back to a browser that did not begin it; refused", "error", ErrWebLoginUnbound, "remote", r.RemoteAddr)
		writePage(rw, http.StatusForbidden, "Refused", fmt.Sprintf("<p>Login to %s refused: %s. Open the login URL your client was given, in the browser you log in with, and prove you are %s there.</p>",
			html.EscapeString(l.server), html.EscapeString(ErrWebLoginUnbound.Error()), html.EscapeString(l.owner)))
		return
	}
	w.mu.Lock()
	ck := w.cookieLocked(l)
	w.mu.Unlock()
	ck.MaxAge = -1 // spent
	http.SetCookie(rw, ck)
	if l.c == nil {
		// A shared login, come back here: this replica's client of the
		// owner's server exchanges the code.
		if !w.withClient(l) {
			w.logOf(l).Warn("OAuth login through the server failed: this replica has no client of the owner's server")
			writeDone(rw, l.server, "this server has no upstream of that name for the owner")
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := l.complete(ctx, qv); err != nil {
		w.logOf(l).Warn("OAuth login through the server failed", "error", err)
		code := qv.Get("error")
		if code == "" {
			code = "the code could not be exchanged"
			if errors.Is(err, ErrAuthorization) {
				code = "the redirect did not match the login"
			}
		}
		writeDone(rw, l.server, code)
		return
	}
	w.logOf(l).Info("OAuth login through the server completed")
	writeDone(rw, l.server, "")
	if w.OnComplete != nil {
		w.OnComplete(l.owner, l.server, l.url)
	}
}

// writePage writes a small HTML page.
func writePage(rw http.ResponseWriter, status int, title, body string) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.WriteHeader(status)
	fmt.Fprintf(rw, "<!doctype html><meta charset=\"utf-8\"><title>scratchpad-mcp: %s</title>\n%s\n", html.EscapeString(title), body)
}

// withWebLogin gives a [LoginError] the URL of a login through the
// server, when the client has [Options].Web. A login that cannot begin
// (discovery failed) says why in the error instead.
func (c *Client) withWebLogin(ctx context.Context, err error) error {
	le, ok := err.(*LoginError)
	if !ok || c.opts.Web == nil {
		return err
	}
	u, werr := c.opts.Web.url(ctx, c, c.earlierScopes(ctx))
	if werr != nil {
		le.Reason += "; starting a login failed: " + werr.Error()
		return le
	}
	le.URL = u
	return le
}
