package frontdoor

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// FrontDoorOptions configure [FrontDoor]. The zero value checks no token,
// allows loopback origins only and bounds a body by [DefaultBodyTimeout].
type FrontDoorOptions struct {
	// Tokens, when not empty, are the bearer tokens a request must carry
	// one of; its owner becomes the request's [Caller].Owner.
	Tokens []config.Token
	// TokensNow, when not nil, replaces Tokens: it is asked on every
	// request for the tokens in force ([config.TokenSet.Tokens]: the
	// tokens file re-read when it changes), so a token revoked is refused
	// from the next request on. A token is then always required, even
	// when none is left. It must be cheap.
	TokensNow func() []config.Token
	// AllowedOrigins are the Origin values allowed besides loopback ones
	// ([http] allowed_origins); "*" allows any.
	AllowedOrigins []string
	// BodyTimeout bounds the reading of one request body. 0 means
	// [DefaultBodyTimeout].
	BodyTimeout time.Duration
	// Identify, when not nil, is told every request that passed the
	// checks, with its owner, and returns the context the request goes on
	// with (the agent identity its headers name). An error is answered
	// 400 with its text: a bad identity header. It is a hook so that the
	// server does not depend on how identities are parsed (package
	// agents).
	Identify func(r *http.Request, owner string) (context.Context, error)
	// WebLogins, when not nil, serves [oauth.BeginPath] and
	// [oauth.CallbackPath] without a bearer token: an owner's browser
	// logging in to an upstream has none (the begin page asks for the
	// token in its form, the redirect back is proven by the cookie it
	// set).
	WebLogins http.Handler
	// Probes, when not nil, serves [HealthPath] and [ReadyPath] without a
	// bearer token or an Origin check: a balancer has neither, and the
	// probes give no data ([Server.Probes]).
	Probes http.Handler
	// Card, when not nil, serves the Server Card at CardPaths without a
	// bearer token or an Origin check (it is public, read-only, for
	// browsers too: SEP-2127), after the Host check.
	Card      http.Handler
	CardPaths []string
	// Log, when not nil, gets the refused tokens (a line every
	// [refusalLogEvery] at most).
	Log *slog.Logger
	// Telemetry counts the requests refused for their token (kind
	// "auth"); nil is off.
	Telemetry *telemetry.Provider
}

// Probes for a load balancer or an orchestrator, served without a bearer
// token and without any data ([FrontDoorOptions].Probes):
//
//   - /healthz answers 200 while the process serves (alive);
//   - /readyz answers 200 when it can take work: not draining, and
//     ready() (what cmd knows: Redis reachable, upstreams started) says
//     so; else 503 with the reason, one line.
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
)

// DefaultBodyTimeout is [FrontDoorOptions].BodyTimeout when it is 0:
// bodies are at most [DefaultMaxRequestBytes], and 30 seconds is plenty
// for those on any link a client would use.
const DefaultBodyTimeout = 30 * time.Second

// FrontDoor checks every HTTP request before next sees it: the Host
// (403 for a loopback listener reached under another name, against DNS
// rebinding, [ReboundHost]), the bearer token when tokens are configured
// (401 with WWW-Authenticate: Bearer; a valid one proves the connection,
// [ProveConnection]), the Origin (403 unless loopback or allowed), and
// the identity headers ([FrontDoorOptions].Identify, 400). The request's
// [Caller] is put in its context here, once. A body must then arrive
// within the body timeout: one that dribbles in is cut, not held.
//
// A refused request's connection is closed with its answer: a client that
// is refused holds no descriptor.
func FrontDoor(opts FrontDoorOptions, next http.Handler) http.Handler {
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	var rf refusals
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refuse := func(msg string, code int) {
			w.Header().Set("Connection", "close")
			http.Error(w, msg, code)
		}
		// Probes first: a load balancer's check often sends no Host (HTTP/1.0)
		// or the backend's address, and a probe gives nothing a rebound
		// page could use.
		if opts.Probes != nil && (r.URL.Path == HealthPath || r.URL.Path == ReadyPath) {
			opts.Probes.ServeHTTP(w, r)
			return
		}
		if ReboundHost(r) {
			w.Header().Set("Connection", "close")
			RefuseRebound(w, r)
			return
		}
		if opts.Card != nil && slices.Contains(opts.CardPaths, r.URL.Path) {
			opts.Card.ServeHTTP(w, r)
			return
		}
		if opts.WebLogins != nil && (r.URL.Path == oauth.BeginPath || r.URL.Path == oauth.CallbackPath) {
			opts.WebLogins.ServeHTTP(w, r)
			return
		}
		owner := ""
		tokens := opts.Tokens
		if opts.TokensNow != nil {
			tokens = opts.TokensNow()
		}
		if len(tokens) > 0 || opts.TokensNow != nil {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				owner = OwnerOfToken(tokens, tok)
			}
			if owner == "" {
				rf.note(opts.Log, r)
				w.Header().Set("WWW-Authenticate", `Bearer realm="scratchpad-mcp"`)
				opts.Telemetry.Refused(r.Context(), "auth", "")
				refuse("missing or invalid bearer token", http.StatusUnauthorized)
				return
			}
			// The connection is a client's, not a flood's.
			ProveConnection(r.Context())
		}
		r = r.WithContext(WithCaller(r.Context(), Caller{Owner: owner}))
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(opts.AllowedOrigins, o) {
			refuse(fmt.Sprintf("Origin %q is not allowed (add it to [http] allowed_origins)", o), http.StatusForbidden)
			return
		}
		// Who is calling, parsed and checked once: a session this request
		// creates takes it from the request's context.
		ctx := r.Context()
		if opts.Identify != nil {
			var err error
			if ctx, err = opts.Identify(r, owner); err != nil {
				refuse(err.Error(), http.StatusBadRequest)
				return
			}
		}
		// The deadline is lifted once the body is read, so a stream the
		// request opens lives on.
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(opts.BodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// OwnerOfToken is the owner of the bearer token tok, "" when none has it.
// Only hashes are kept; every entry is compared, in constant time,
// whichever matches.
func OwnerOfToken(tokens []config.Token, tok string) string {
	if tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	owner := ""
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(sum[:], t.SHA256[:]) == 1 {
			owner = t.Owner
		}
	}
	return owner
}

// IsLoopbackHost reports whether host (no port; brackets allowed) is
// localhost or a loopback IP.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func originAllowed(allowed []string, origin string) bool {
	for _, o := range allowed {
		if o == "*" || strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && IsLoopbackHost(u.Hostname())
}

// refusals logs refused tokens, at most one line every refusalLogEvery
// with how many came since the last: a flood of bad tokens is seen in the
// log without filling it.
type refusals struct {
	mu   sync.Mutex
	last time.Time
	n    int
}

const refusalLogEvery = 10 * time.Second

func (rf *refusals) note(log *slog.Logger, r *http.Request) {
	rf.mu.Lock()
	rf.n++
	if time.Since(rf.last) < refusalLogEvery {
		rf.mu.Unlock()
		return
	}
	n := rf.n
	rf.n, rf.last = 0, time.Now()
	rf.mu.Unlock()
	log.Warn("refused: missing or invalid bearer token", "remote", r.RemoteAddr, "path", r.URL.Path, "refused_since_last_line", n)
}

// deadlineBody lifts the read deadline set for the body once the body has
// been read to its end (or closed).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.lift()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.lift()
	return b.ReadCloser.Close()
}

func (b *deadlineBody) lift() {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}
