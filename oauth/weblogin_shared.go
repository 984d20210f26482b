package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Logins through the server on replicas ([WebLogins].Store with Shared):
// behind a balancer without stickiness the begin page, the proof and the
// redirect back each reach any replica, so a pending login lives on the
// shared store, not in one process's memory:
//
//   - the record, [layout.OAuthWebLoginName](id), sealed with the token
//     store's key (it holds the PKCE verifier, the state, the client's
//     identity and secret, the binding's hash), expiring with the login;
//   - its id under the state's SHA-256 ([layout.OAuthWebLoginStateName]),
//     for the redirect back, which brings the state alone;
//   - its id under owner and server ([layout.OAuthWebLoginOwnerName]),
//     taken under that name's lock while a login is begun, so that two
//     replicas hand out one URL for one owner and server at a time.
//
// The proof and the redirect back take the record's lock: the proof
// rewrites it with the binding, the redirect back reads it, checks the
// cookie and deletes it before the code is exchanged, so that of two
// redirects with one state on two replicas exactly one completes.

// Lock TTLs: how long a replica that died mid-step (or whose unlock did
// not reach the store) holds a lock. Beginning a login takes discovery
// and registration, each request bounded by the 30 s HTTP client; a step
// of the browser's (the proof, the redirect back) only talks to the
// store, so its lock is short, and a browser finds it free again soon.
const (
	webLoginBeginLockTTL = 2 * time.Minute
	webLoginStepLockTTL  = 10 * time.Second
)

// webRecord is a pending login as the shared store keeps it.
type webRecord struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"` // the begin URL handed out
	Owner       string   `json:"owner"`
	Server      string   `json:"server"`
	State       string   `json:"state"`
	Verifier    string   `json:"verifier"`
	RedirectURI string   `json:"redirect_uri"`
	AuthURL     string   `json:"auth_url"`
	Client      Identity `json:"client"`
	Scopes      []string `json:"scopes,omitempty"`
	// What of the discovery the code's exchange needs.
	Resource              string    `json:"resource"`
	Issuer                string    `json:"issuer"`
	AuthorizationEndpoint string    `json:"authorization_endpoint"`
	TokenEndpoint         string    `json:"token_endpoint"`
	RevocationEndpoint    string    `json:"revocation_endpoint,omitempty"`
	IssParameter          bool      `json:"iss_parameter,omitempty"`
	Started               time.Time `json:"started"`
	// Binding is the SHA-256 of the proven browser's cookie secret.
	Binding []byte `json:"binding,omitempty"`
}

func recordOf(l *webLogin) *webRecord {
	p := l.pending
	rec := &webRecord{
		ID: l.id, URL: l.url, Owner: l.owner, Server: l.server,
		State: p.state, Verifier: p.verifier, RedirectURI: p.redirectURI, AuthURL: p.authURL,
		Client: p.client, Scopes: p.scopes, Resource: p.d.Resource,
		Issuer: p.d.AS.Issuer, AuthorizationEndpoint: p.d.AS.AuthorizationEndpoint, TokenEndpoint: p.d.AS.TokenEndpoint,
		RevocationEndpoint: p.d.AS.RevocationEndpoint, IssParameter: p.d.AS.AuthorizationResponseIssParameterSupported,
		Started: p.started,
	}
	if l.proved {
		rec.Binding = l.binding[:]
	}
	return rec
}

// login is the pending login rec keeps, without a client: the replica
// reading it may not be the one that began it ([WebLogins].Clients gives
// one to the redirect back).
func (rec *webRecord) login() *webLogin {
	d := &Discovery{Resource: rec.Resource, AS: ServerMetadata{
		Issuer: rec.Issuer, AuthorizationEndpoint: rec.AuthorizationEndpoint, TokenEndpoint: rec.TokenEndpoint,
		RevocationEndpoint: rec.RevocationEndpoint, AuthorizationResponseIssParameterSupported: rec.IssParameter,
	}}
	l := &webLogin{
		pending: &pending{d: d, client: rec.Client, scopes: rec.Scopes, verifier: rec.Verifier, state: rec.State,
			redirectURI: rec.RedirectURI, authURL: rec.AuthURL, started: rec.Started},
		id: rec.ID, url: rec.URL, owner: rec.Owner, server: rec.Server,
	}
	if len(rec.Binding) == sha256.Size {
		copy(l.binding[:], rec.Binding)
		l.proved = true
	}
	return l
}

// shared is the store pending logins live on, nil for this process's
// memory.
func (w *WebLogins) shared() *Store {
	if w.Store != nil && w.Store.Shared != nil {
		return w.Store
	}
	return nil
}

func (w *WebLogins) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

// stateSum names a state on the shared store: its SHA-256, never the
// state itself.
func stateSum(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// sharedURL is [WebLogins.url] on the shared store: the login pending for
// c's owner and server, begun on any replica, when there is one; else a
// new one, written whole (record, state, owner and server) or not at all.
func (w *WebLogins) sharedURL(ctx context.Context, st *Store, c *Client, earlier []string) (string, error) {
	owner, server := c.opts.Owner, c.opts.Server.Name
	w.mu.Lock()
	redirect := w.urlLocked(CallbackPath)
	w.mu.Unlock()
	if redirect == "" {
		return "", errors.New("the server has no URL for the redirect yet")
	}
	oname := layout.OAuthWebLoginOwnerName(owner, server)
	unlock, err := st.Shared.Lock(ctx, oname, webLoginBeginLockTTL)
	if err != nil {
		return "", fmt.Errorf("waiting for the pending login of upstream %q: %w", server, err)
	}
	defer unlock()
	id, err := st.Shared.GetValue(ctx, oname)
	switch {
	case err == nil:
		l, err := w.loadShared(ctx, st, string(id))
		if err != nil {
			return "", err
		}
		if l != nil && l.owner == owner && l.server == server {
			return l.url, nil
		}
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("reading the pending login of upstream %q: %w", server, err)
	}
	p, err := c.begin(ctx, redirect, earlier)
	if err != nil {
		return "", err
	}
	p.started = w.clock() // the clock the replicas' expiry reads
	l := &webLogin{pending: p, id: randomString(18), owner: owner, server: server}
	w.mu.Lock()
	l.url = w.beginURLLocked(l.id)
	w.mu.Unlock()
	if err := w.putShared(ctx, st, l); err != nil {
		return "", err
	}
	return l.url, nil
}

// putShared writes a new login: its record, then its state's name, then
// its owner's and server's; a failure takes back what was written (and
// the TTL what a store gone away kept), so no replica finds half a
// login.
func (w *WebLogins) putShared(ctx context.Context, st *Store, l *webLogin) error {
	name := layout.OAuthWebLoginName(l.id)
	sname := layout.OAuthWebLoginStateName(stateSum(l.state))
	oname := layout.OAuthWebLoginOwnerName(l.owner, l.server)
	if err := w.saveRecord(ctx, st, l, webLoginTTL); err != nil {
		return err
	}
	err := st.Shared.PutValue(ctx, sname, []byte(l.id), webLoginTTL)
	if err == nil {
		if err = st.Shared.PutValue(ctx, oname, []byte(l.id), webLoginTTL); err != nil {
			_ = st.Shared.DeleteValue(ctx, sname)
		}
	}
	if err != nil {
		_ = st.Shared.DeleteValue(ctx, name)
		return fmt.Errorf("storing the pending login of upstream %q: %w", l.server, err)
	}
	return nil
}

// saveRecord seals l's record and puts it, expiring after ttl.
func (w *WebLogins) saveRecord(ctx context.Context, st *Store, l *webLogin, ttl time.Duration) error {
	k, err := st.sealer(false)
	if err != nil {
		return err
	}
	plain, err := json.Marshal(recordOf(l))
	if err != nil {
		return err
	}
	name := layout.OAuthWebLoginName(l.id)
	if err := st.Shared.PutValue(ctx, name, k.seal(name, plain), ttl); err != nil {
		return fmt.Errorf("storing the pending login of upstream %q: %w", l.server, err)
	}
	return nil
}

// loadShared is the live login named id on the shared store, nil when
// there is none (never begun, completed, expired).
func (w *WebLogins) loadShared(ctx context.Context, st *Store, id string) (*webLogin, error) {
	if id == "" {
		return nil, nil
	}
	name := layout.OAuthWebLoginName(id)
	b, err := st.Shared.GetValue(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading a pending login: %w", err)
	}
	plain, err := st.openSealed(name, b, "a pending login", sealHints{})
	if err != nil {
		return nil, err
	}
	var rec webRecord
	if err := json.Unmarshal(plain, &rec); err != nil || rec.ID != id {
		return nil, fmt.Errorf("%w: a pending login on [cluster] redis_url is not one", ErrSealKey)
	}
	if w.clock().Sub(rec.Started) > webLoginTTL {
		return nil, nil
	}
	return rec.login(), nil
}

// bindShared records the proof of l's owner (binding, the cookie
// secret's hash) on the shared store, under the login's lock; false
// when the login is gone meanwhile (completed, expired).
func (w *WebLogins) bindShared(ctx context.Context, st *Store, l *webLogin, binding [sha256.Size]byte, now time.Time) (bool, error) {
	unlock, err := st.Shared.Lock(ctx, layout.OAuthWebLoginName(l.id), webLoginStepLockTTL)
	if err != nil {
		return false, fmt.Errorf("waiting for a pending login: %w", err)
	}
	defer unlock()
	cur, err := w.loadShared(ctx, st, l.id)
	if err != nil || cur == nil {
		return false, err
	}
	ttl := webLoginTTL - now.Sub(cur.started)
	if ttl < time.Millisecond {
		return false, nil
	}
	cur.binding, cur.proved = binding, true
	if err := w.saveRecord(ctx, st, cur, ttl); err != nil {
		return false, err
	}
	*l = *cur
	return true, nil
}

// takeShared finds the login state names and, when r carries its proven
// browser's cookie, takes it: under the login's lock the record is read,
// checked and deleted, so that it completes once across replicas. A
// login found but not bound to r is left for the owner's browser.
func (w *WebLogins) takeShared(ctx context.Context, st *Store, state string, r *http.Request) (l *webLogin, bound bool, err error) {
	if state == "" {
		return nil, false, nil
	}
	sname := layout.OAuthWebLoginStateName(stateSum(state))
	id, err := st.Shared.GetValue(ctx, sname)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading a pending login: %w", err)
	}
	name := layout.OAuthWebLoginName(string(id))
	unlock, err := st.Shared.Lock(ctx, name, webLoginStepLockTTL)
	if err != nil {
		return nil, false, fmt.Errorf("waiting for a pending login: %w", err)
	}
	defer unlock()
	if l, err = w.loadShared(ctx, st, string(id)); err != nil || l == nil {
		return nil, false, err
	}
	if subtle.ConstantTimeCompare([]byte(l.state), []byte(state)) != 1 {
		return nil, false, nil
	}
	w.mu.Lock()
	bound = w.boundLocked(r, l)
	w.mu.Unlock()
	if !bound {
		return l, false, nil
	}
	// Good once: deleted before the code is exchanged. Should the
	// delete fail, nothing is consumed and the owner may come back.
	if err := st.Shared.DeleteValue(ctx, name); err != nil {
		return nil, false, fmt.Errorf("taking a pending login: %w", err)
	}
	// The names leading to it lead nowhere now; their TTL ends them
	// should these deletes not reach the store.
	_ = st.Shared.DeleteValue(ctx, sname)
	w.dropOwnerName(ctx, st, l)
	return l, true, nil
}

// dropOwnerName forgets that l is the login handed out for its owner and
// server, unless another has taken its place meanwhile.
func (w *WebLogins) dropOwnerName(ctx context.Context, st *Store, l *webLogin) {
	oname := layout.OAuthWebLoginOwnerName(l.owner, l.server)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	unlock, err := st.Shared.Lock(ctx, oname, webLoginBeginLockTTL)
	if err != nil {
		return
	}
	defer unlock()
	if id, err := st.Shared.GetValue(ctx, oname); err == nil && string(id) == l.id {
		_ = st.Shared.DeleteValue(ctx, oname)
	}
}

// withClient gives l, a shared login come back to this replica, the
// client of its owner's server ([WebLogins].Clients); false when this
// replica has none.
func (w *WebLogins) withClient(l *webLogin) bool {
	if w.Clients == nil {
		return false
	}
	c, ok := w.Clients(l.owner, l.server)
	if !ok || c == nil || c.opts.Owner != l.owner || c.opts.Server.Name != l.server {
		return false
	}
	p := *l.pending
	p.c = c
	l.pending = &p
	return true
}

// refusal counts a shared login's refused steps on this replica.
type refusal struct {
	n  int
	at time.Time
}

// refusedLocked counts one more refused step of the shared login id and
// returns how many this replica saw; counts older than a login are
// dropped.
func (w *WebLogins) refusedLocked(id string) int {
	if w.refusals == nil {
		w.refusals = map[string]refusal{}
	}
	now := time.Now()
	for k, r := range w.refusals {
		if now.Sub(r.at) > webLoginTTL {
			delete(w.refusals, k)
		}
	}
	r := w.refusals[id]
	if r.n == 0 {
		r.at = now
	}
	r.n++
	w.refusals[id] = r
	return r.n
}

// sharedFailed is the page of a step the shared store could not take:
// Redis away (named, [cluster] redis_url, nothing of the step kept), or
// a record this replica's key does not open.
func (w *WebLogins) sharedFailed(rw http.ResponseWriter, step string, err error) {
	log := w.Logger
	if log == nil {
		log = slog.Default()
	}
	log.Warn("OAuth login through the server: "+step+" failed on the store the replicas share", "error", err)
	if errors.Is(err, ErrSealKey) {
		writePage(rw, http.StatusInternalServerError, "Login unavailable",
			"<p>This replica cannot read the pending login: the replicas do not share the key sealing OAuth records on [cluster] redis_url. The operator must give every replica the same key file.</p>")
		return
	}
	writePage(rw, http.StatusServiceUnavailable, "Try again",
		"<p>The store this server's replicas share ([cluster] redis_url) could not be reached, so "+html.EscapeString(step)+" could not go on; nothing of it was kept. Try again in a moment.</p>")
}
