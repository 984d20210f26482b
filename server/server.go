package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/state"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Options configures a [Server]. The zero value of each field is a usable
// default except Session, which is required, and Proxy, which is unless
// every session's [Own].Acquire gives one.
type Options struct {
	Name, Version, Instructions string
	Logger                      *slog.Logger
	// Proxy forwards everything the upstreams offer.
	Proxy *proxy.Proxy
	// State is where what outlives a request is kept (package state):
	// 2025 sessions, their owners' counts, notifications between
	// replicas. nil means a [state.Local] of this process.
	State state.Store
	// Lease is how long a replica's claim on a session lasts without
	// renewal ([cluster] lease): the claims of a replica that dies expire
	// after it. 0 means [DefaultLease].
	Lease time.Duration
	// Session says what one client session gets of the server's own: its
	// tools, resources and prompts, and what their handlers need in their
	// context. It is called when a session is created (over HTTP, with
	// the request that creates it) and must be cheap and free of side
	// effects: over HTTP a session may be created and never used.
	Session func(info SessionInfo) (*Own, error)
	// InitializeMeta, when not nil, is put in the initialize result's
	// _meta.
	InitializeMeta map[string]any
	// StartUpstreams, when not nil, is the context upstreams are started
	// with at the first client's initialize, offered exactly the sampling,
	// elicitation and roots capabilities that client declared. For a
	// server with one client (stdio); otherwise the caller starts the
	// proxy itself.
	StartUpstreams context.Context
	// Identify is the identify stage's part that knows agents: for one
	// request that reaches the proxy or an own tool (ctx is the
	// request's, with its session's values: [Own].Context), it fills
	// req's Agent and References with who the request is for; for a
	// tools/call (call true) it also counts the call for the agent's
	// usage. It returns the context an own tool then runs under (own
	// tools are handlers of a context: the agent resolved once rides in
	// it). An error refuses the call (a tool result with isError). nil
	// leaves req without an agent: nothing charged, diverted by
	// threshold only.
	Identify func(ctx context.Context, req *proxy.Request, call bool) (context.Context, error)
	// SessionEnded, when not nil, is told the id of every session that
	// ends.
	SessionEnded func(id string)
	// CallTimeout bounds one call of the server's own tools, resources
	// and prompts (exploration, pad, artifacts): past it the call's
	// context ends with [ErrCallTimeout]. 0 means [DefaultCallTimeout];
	// negative, no bound. A forwarded call is bounded by its upstream's
	// own timeout ([config.Server].Timeout) instead.
	CallTimeout time.Duration
	// InputGrace is how long, after the end of a stdio client's input,
	// the requests it sent before are given to be answered; what still
	// runs then is stopped ([ErrClientGone]). 0 means
	// [DefaultInputGrace]; negative, none.
	InputGrace time.Duration
	// StateKeys seal the requestState handed to 2026-07-28 clients for
	// an upstream's input-required result or a parked call (each at least
	// 32 bytes): the first seals, every one opens, so a key is rotated
	// without refusing states issued just before. Replicas share them.
	// None means a random key: states are not valid in another process.
	StateKeys [][]byte
	// Telemetry gets a server span per request of either era, an audit
	// record per tools/call, session durations and refusals
	// (telemetry.go). nil is off.
	Telemetry *telemetry.Provider
}

// DefaultCallTimeout is [Options].CallTimeout when it is 0: a minute,
// the default bound of a forwarded call too. The slowest exploration
// calls of real outputs (a cold index of a 512 MiB stored output, a grep
// of it) take seconds; one still running after a minute is runaway work
// (a pathological regexp) that holds a core.
const DefaultCallTimeout = time.Minute

// Why a request's context ended, besides the client's cancellation
// (its [context.Cause]).
var (
	// ErrClientGone: the client that sent it left without cancelling
	// (its connection or input closed) and did not come back for the
	// answer.
	ErrClientGone = errors.New("the client is gone")
	// ErrSessionEnded: its session ended (DELETE, idle timeout, the
	// server shutting down).
	ErrSessionEnded = errors.New("the session ended")
	// ErrCallTimeout: a call of the server's own ran past
	// [Options].CallTimeout.
	ErrCallTimeout = errors.New("took longer than the time bound of one call")
)

func (s *Server) callTimeout() time.Duration {
	if s.opts.CallTimeout == 0 {
		return DefaultCallTimeout
	}
	return s.opts.CallTimeout
}

// SessionInfo describes a session being created.
type SessionInfo struct {
	ID string
	// Request is the HTTP request that creates the session (its headers
	// and context); nil over stdio.
	Request *http.Request
}

// Own is what a session gets of the server's own.
type Own struct {
	// Context, when not nil, adds to every request's context what the
	// session's handlers need (identity). header is the HTTP request's
	// header, nil over stdio.
	Context   func(ctx context.Context, header http.Header) context.Context
	Tools     []tool.Def
	Resources []tool.Resource
	Prompts   []tool.Prompt
	// Acquire, when not nil, gives the proxy this session forwards to
	// (its owner's: [proxy.Pool]), at the session's first request, and
	// the function that gives it back when the session ends. nil means
	// [Options].Proxy. It is called under the session's lock, so that no
	// request of the session sees it without its proxy: it must not call
	// back into the server.
	Acquire func() (p *proxy.Proxy, release func())
	// Watch, when not nil, subscribes notify to changes of an own
	// resource; it returns the function that ends the subscription.
	Watch func(ctx context.Context, uri string, notify func()) (stop func())
	// Instructions and InitializeMeta, when set, replace the server's
	// ([Options]) for this session: an agent is told its own limits.
	Instructions   string
	InitializeMeta map[string]any
	// Listed, when not nil, is given every tools/list result as the
	// client receives it (the server's own tools and the upstreams'),
	// so that the agent's budget carries what was really listed.
	Listed func(raw []byte)
}

// Server is the MCP server clients talk to: one go-sdk server per client
// session, each with the session's own tools and everything the proxy
// forwards.
type Server struct {
	opts   Options
	log    *slog.Logger
	sdkLog *slog.Logger // go-sdk's own records, warnings and errors only

	mu       sync.Mutex
	sessions map[string]*session // live sessions by id (after their first request)

	agents20260728 *agents20260728 // 2026-07-28 callers' agents
	sealer         *wire.Sealer    // the requestState it hands out (rev20260728_inputrequired.go)
	parked         parkedCalls     // calls waiting for a 2026-07-28 client's input (rev20260728_parked.go)

	calls    inflight    // requests being handled, both eras (drain.go)
	draining atomic.Bool // Drain was called

	lmu             sync.Mutex
	listeners       map[*listener]bool // open subscriptions/listen requests
	listensPerOwner map[string]int
	// ctx ends at [Server.Shutdown]: the calls of 2026-07-28 requests,
	// which no session ends, end with it.
	ctx  context.Context
	stop context.CancelCauseFunc
}

// New returns a server. It serves once one of [Server.ServeStdio],
// [Server.StreamableHTTP] or [Server.SSE] is used.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Name == "" {
		opts.Name = "scratchpad-mcp"
	}
	s := &Server{opts: opts, log: opts.Logger, sdkLog: slog.New(quiet{opts.Logger.Handler()}), sessions: map[string]*session{}}
	s.agents20260728 = newAgents20260728(s)
	var err error
	if s.sealer, err = newSealer(opts.StateKeys...); err != nil {
		// A key too short: seal with a fresh one, and say so.
		s.log.Error("requestState key refused; using a random one", "error", err)
		s.sealer, _ = newSealer(nil)
	}
	s.ctx, s.stop = context.WithCancelCause(context.Background())
	return s
}

// Changed re-registers the upstream items of kind on every live session
// forwarding to p, which tells its client (list_changed). The proxy's
// [proxy.Options.OnChange].
func (s *Server) Changed(p *proxy.Proxy, kind proxy.Kind) {
	s.changedListeners(p, kind)
	for _, se := range s.live() {
		if se.proxy() == p {
			se.syncUpstream(kind)
		}
	}
}

// ElicitationComplete tells owner's sessions whose clients take URL
// elicitations that the elicitation id (a login through the server) is
// complete: a client waiting on it may call again.
func (s *Server) ElicitationComplete(owner, id string) {
	params, _ := json.Marshal(map[string]string{"elicitationId": id})
	for _, se := range s.live() {
		if se.owner == owner && se.Capabilities().ElicitationURL {
			if err := se.Notify(context.Background(), "notifications/elicitation/complete", params); err != nil {
				s.log.Debug("elicitation complete not sent", "session", se.id, "error", err)
			}
		}
	}
}

func (s *Server) live() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		out = append(out, se)
	}
	return out
}

// Sessions is the number of live client sessions.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// ServeStdio serves one client over in and out until the client closes
// its side or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	se, err := s.newSession(SessionInfo{ID: "stdio"})
	if err != nil {
		return err
	}
	// A line go-sdk cannot decode would end the session: the filter
	// answers it instead (see stdio.go), writing under the transport's
	// lock so its answers never fall inside a raw result (rawwire.go).
	se.wire = &rawWire{}
	t := &rawStdio{out: out, wire: se.wire}
	se.ids = &t.ids
	// 2026-07-28 requests are served beside the session, their calls
	// ended with it.
	modern := newStdio20260728(se.ctx, s, se, t)
	// The end of the client's input is not the client's end: what it
	// asked before is answered first (a client that closes its input to
	// stop the server waits for the exit, MCP's stdio shutdown), then
	// go-sdk reads the end. A broken input is the client gone.
	drain := func() {
		modern.endListens()
		graceCtx, cancel := context.WithTimeout(ctx, s.inputGrace())
		defer cancel()
		t.ids.waitIdle(graceCtx)
		modern.waitIdle(graceCtx)
		if graceCtx.Err() != nil {
			// Past the grace: what still runs is stopped, and answered
			// saying so (briefly waited for).
			se.stop(ErrClientGone)
			endCtx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			t.ids.waitIdle(endCtx)
			modern.waitIdle(endCtx)
		}
	}
	r := stdioFilter(in, wireWriter{t}, mcp.DefaultMaxLineLength, &t.ids, modern.take, drain, func() { se.stop(ErrClientGone) })
	defer r.Close()
	t.in = io.NopCloser(r)
	// The server's end (ctx) ends the session's calls first: go-sdk's
	// close waits for them.
	defer context.AfterFunc(ctx, func() { se.stop(ErrSessionEnded) })()
	err = se.mcp.Run(ctx, t)
	se.stop(ErrSessionEnded)
	modern.end()
	// The session's end (its agent's usage record) is done before the
	// caller goes on, typically to exit.
	if se.serverSession() != nil {
		select {
		case <-se.ended:
		case <-time.After(10 * time.Second):
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// DefaultInputGrace is [Options].InputGrace's default: enough for the
// calls of a `serve < requests.jsonl`, and within the few seconds a
// client closing its input to stop the server waits before SIGTERM.
const DefaultInputGrace = 10 * time.Second

func (s *Server) inputGrace() time.Duration {
	switch g := s.opts.InputGrace; {
	case g < 0:
		return 0
	case g == 0:
		return DefaultInputGrace
	default:
		return g
	}
}

// Shutdown ends every live session: the calls in flight are cancelled
// ([ErrSessionEnded]), then each session is closed (its streams end, so
// an http.Server's Shutdown need not wait for them). For the server's
// end; it does not wait for the sessions' ends.
func (s *Server) Shutdown() {
	s.stop(ErrSessionEnded)
	s.agents20260728.endAll()
	for _, se := range s.live() {
		se.stop(ErrSessionEnded)
		if ss := se.serverSession(); ss != nil {
			go func() { _ = ss.Close() }()
		}
	}
}

// StreamableHTTPOptions configure [Server.StreamableHTTP].
type StreamableHTTPOptions struct {
	// SessionTimeout ends a session idle this long. 0 means never.
	SessionTimeout time.Duration
	// EventStore keeps what was sent on each stream so a client that
	// reconnects with Last-Event-ID gets what it missed. nil means a
	// memory store bounded to StoreBytes (eventstore.go), which also
	// keeps no more than a session's last 256 finished streams.
	EventStore mcp.EventStore
	// StoreBytes bounds the default event store, all sessions together
	// (the oldest events are dropped first; an event larger than the
	// bound is not kept). 0 means 10 MiB.
	StoreBytes int
	// MaxRequestBytes bounds a POST's body. 0 means
	// [DefaultMaxRequestBytes].
	MaxRequestBytes int64
	// MaxSessions bounds the live sessions, all owners together, and
	// MaxSessionsPerOwner those of one owner (a bearer token's; all
	// sessions without tokens): an initialize past either is answered 429
	// naming the limit. 0 means [DefaultMaxSessions] and
	// [DefaultMaxSessionsPerOwner]; negative, no bound. With a replicated
	// [Options].State both bound the 2025 sessions of all the replicas
	// together too (replica_claims.go), as well as each process's own.
	MaxSessions, MaxSessionsPerOwner int
	// AgentIdle is how long the agent of a 2026-07-28 caller (which has
	// no session to end) lives on after its last request; then it ends
	// and its usage record is written. 0 means SessionTimeout, or
	// [DefaultAgentIdle] when that is 0 too. MaxSessions and
	// MaxSessionsPerOwner bound these agents as they bound sessions.
	AgentIdle time.Duration
	// ResumeWindow is how long the calls of a POST whose client left
	// (its connection closed) keep running for the client to resume
	// their stream (Last-Event-ID) and get their answers; past it they
	// are cancelled ([ErrClientGone]), forwarded ones at their
	// upstreams too. 0 means [DefaultResumeWindow]; negative, cancelled
	// as soon as the client leaves.
	ResumeWindow time.Duration
}

// DefaultResumeWindow is [StreamableHTTPOptions].ResumeWindow when it is
// 0: five times the retry delay the server's prime events give, which
// covers a client's first reconnection attempts (go-sdk's client waits
// that delay, then backs off from 1 s by 1.5×), while a client that died
// holds what its calls run on for seconds, not until they end.
const DefaultResumeWindow = 5 * primeRetry

// Defaults of [StreamableHTTPOptions]' session bounds: an idle session
// holds a go-sdk server and its goroutines (~60 KiB), so 2,000 cost about
// 120 MiB, and one owner cannot take more than a quarter of them.
const (
	DefaultMaxSessions         = 2000
	DefaultMaxSessionsPerOwner = 500
)

// ErrTooManySessions is returned when creating a session would pass a
// session bound ([StreamableHTTPOptions].MaxSessions or
// MaxSessionsPerOwner).
var ErrTooManySessions = errors.New("too many sessions")

// StreamableHTTP returns the handler of the streamable HTTP transport
// (resumable streams, one go-sdk server per session; see streamable.go).
func (s *Server) StreamableHTTP(opts StreamableHTTPOptions) http.Handler {
	store := opts.EventStore
	if store == nil {
		store = newMemoryEvents(opts.StoreBytes)
	}
	limit := opts.MaxRequestBytes
	if limit <= 0 {
		limit = DefaultMaxRequestBytes
	}
	// A request that reaches a loopback address with a Host that is not
	// is refused (DNS rebinding). Origin is checked by the front door
	// ([FrontDoor]), which knows the configured allowed origins.
	maxAll, maxOwner := opts.MaxSessions, opts.MaxSessionsPerOwner
	if maxAll == 0 {
		maxAll = DefaultMaxSessions
	}
	if maxOwner == 0 {
		maxOwner = DefaultMaxSessionsPerOwner
	}
	s.agents20260728.mu.Lock()
	s.agents20260728.max, s.agents20260728.maxOwner = maxAll, maxOwner
	switch {
	case opts.AgentIdle > 0:
		s.agents20260728.idle = opts.AgentIdle
	case opts.SessionTimeout > 0:
		s.agents20260728.idle = opts.SessionTimeout
	}
	s.agents20260728.mu.Unlock()
	grace := opts.ResumeWindow
	switch {
	case grace == 0:
		grace = DefaultResumeWindow
	case grace < 0 || store == nil:
		grace = 0 // nothing to resume
	}
	h := &httpHandler{s: s, timeout: opts.SessionTimeout, store: store, limit: limit, grace: grace,
		maxAll: maxAll, maxOwner: maxOwner, sessions: map[string]*httpSession{}, perOwner: map[string]int{}}
	if h.replicated() {
		go h.renewClaims()
	}
	return h
}

// refuseForeignSession answers 404, as for an unknown session, a request
// naming a session of another owner, and reports whether it did: a
// session belongs to the owner ([Caller].Owner) of the request that
// created it.
func (s *Server) refuseForeignSession(w http.ResponseWriter, r *http.Request) bool {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return false
	}
	s.mu.Lock()
	se := s.sessions[id]
	s.mu.Unlock()
	if se == nil || se.owner == ownerOf(r) {
		return false
	}
	http.Error(w, "session not found", http.StatusNotFound)
	return true
}

// quiet passes on go-sdk's records from level warn up: it logs every
// session's connection at info, which would drown the server's own log.
type quiet struct{ slog.Handler }

func (q quiet) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && q.Handler.Enabled(ctx, l)
}
func (q quiet) WithAttrs(a []slog.Attr) slog.Handler { return quiet{q.Handler.WithAttrs(a)} }
func (q quiet) WithGroup(n string) slog.Handler      { return quiet{q.Handler.WithGroup(n)} }
