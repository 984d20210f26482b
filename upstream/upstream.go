package upstream

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Options configure an [Upstream]. The zero value of every field but
// Server is usable.
type Options struct {
	// Server is the upstream's configuration: name, transport, command
	// or URL, headers, timeout, restart policy. A zero Timeout is
	// [config.DefaultTimeout].
	Server config.Server
	// Logger receives the upstream's lifecycle (ready, lost, restarting)
	// with the server's name; nil is [slog.Default].
	Logger *slog.Logger
	// ClientName and ClientVersion are sent as clientInfo at initialize.
	ClientName, ClientVersion string

	// OnNotify receives every notification the upstream sends (list
	// changes included, after the listing was marked stale), in the order
	// the upstream sent them. See [Upstream] for when it runs.
	OnNotify func(u *Upstream, method string, params json.RawMessage)
	// OnRequest serves a request from the upstream (sampling,
	// elicitation, roots; ping is answered without it). ctx ends when the
	// upstream cancels the request or the connection ends; an
	// [*RPCError] is answered with its code, any other error with
	// -32603. Nil answers every request with -32601.
	OnRequest func(ctx context.Context, u *Upstream, method string, params json.RawMessage) (json.RawMessage, error)
	// OnListChanged is called after every successful listing: at each
	// (re)connection and after a list_changed notification was acted on.
	// It runs on the supervisor's goroutine: a Call to the same upstream
	// from it works, but the next re-listing waits for it.
	OnListChanged func(u *Upstream)
	// OnRestart, when not nil, is told each restart after a failure
	// (the "upstream restarting" log line), on the supervisor's
	// goroutine: telemetry counts them.
	OnRestart func(u *Upstream)
	// Auth authorizes the requests of a remote upstream (streamable HTTP
	// and SSE): an [oauth.Client] adds its bearer token and refreshes it.
	// Nil sends requests with the configured headers only.
	Auth Authorizer
}

// Authorizer authorizes a remote upstream's requests: [oauth.Client] is
// one.
type Authorizer interface {
	// Wrap wraps the upstream's HTTP transport.
	Wrap(http.RoundTripper) http.RoundTripper
	// Changed is closed when new credentials are stored (a login came
	// back): an upstream waiting for a login tries again at once.
	Changed() <-chan struct{}
}

// Item is a tool, resource, resource template or prompt exactly as the
// upstream listed it. Name is its key: the tool or prompt name, the
// resource URI, the template's uriTemplate.
type Item struct {
	Name string
	Raw  json.RawMessage // the whole object, as sent
}

// Capabilities is what the proxy needs to know of an upstream's
// initialize result: what it may be asked. A nil field is a capability
// the upstream did not declare. The whole result is
// [Upstream.InitializeResult].
type Capabilities struct {
	Tools       *struct{}             `json:"tools"`
	Resources   *ResourceCapabilities `json:"resources"`
	Prompts     *struct{}             `json:"prompts"`
	Logging     *struct{}             `json:"logging"`
	Completions *struct{}             `json:"completions"`
	// Extensions are the extensions it declared, by id (2026-07-28:
	// io.modelcontextprotocol/tasks), as sent.
	Extensions map[string]json.RawMessage `json:"extensions"`
}

// ResourceCapabilities is an upstream's resources capability.
type ResourceCapabilities struct {
	Subscribe bool `json:"subscribe"`
}

// Upstream states, as reported by [Upstream.State].
const (
	StateConnecting = "connecting"
	StateReady      = "ready"
	StateRestarting = "restarting"
	StateFailed     = "failed"
	StateStopped    = "stopped"
)

// Upstream is one configured MCP server. Once started it connects in the
// background, runs the MCP handshake, lists tools, resources, templates
// and prompts (kept as raw JSON), re-lists them when the upstream says
// they changed, and restarts a connection that dies, with exponential
// backoff (a streamable HTTP session the server lost is re-initialized at
// once).
//
// Calls made while it is connecting wait for it; while it is restarting
// after a failure they wait at most min(server timeout, 10 s) and then
// fail with [ErrUpstreamUnavailable] naming the upstream and its last
// error. Calls in flight when the connection dies fail with
// [ErrUpstreamExited].
//
// Order: the upstream's notifications and the responses to calls are
// delivered one at a time, in the order the upstream sent them (per
// stream, for streamable HTTP), on a goroutine of the connection's, never
// on its read loop. So a notification sent before a response, such as
// progress, has been handed to [Options.OnNotify] and OnNotify has
// returned before the [Upstream.Call] that the response answers returns.
// The price: OnNotify holds up what comes after it, and must not wait for
// a response from the same upstream (start a goroutine for that).
// Requests from the upstream are served each on a goroutine of its own.
type Upstream struct {
	cfg   config.Server
	log   *slog.Logger
	opts  Options
	h     handlers
	hc    *http.Client // remote upstreams: one client for every connection
	offer map[string]any

	mu        sync.Mutex
	c         conn
	changed   chan struct{} // closed and replaced when c or the state changes
	tools     []Item
	resources []Item
	templates []Item
	prompts   []Item
	caps      Capabilities
	initRes   json.RawMessage // the upstream's initialize result
	state     string
	lastErr   error
	logLevel  string // forwarded with logging/setLevel on every (re)connect

	// 2026-07-28: the verdict of the last connection, each tool's
	// x-mcp-header bindings, each listing's freshness, the resource
	// subscriptions a listen stream carries.
	proto      Protocol
	bindings   map[string][]wire.Binding
	listed     map[ListKind]listing
	subs       map[string]bool
	listenWake chan struct{}
	acked      chan struct{}   // a listen stream was acknowledged
	stopListen func()          // ends the live connection's listen loop
	listening  ListKind        // the kinds the live listen stream reports changes of
	clientInfo json.RawMessage // {"name","version"} of ours
	offerJSON  json.RawMessage // the offer, as clientCapabilities
	// listCaps is what a request made for no one client (a re-listing)
	// declares: the offer's extensions only, since an extension may
	// change what is listed (an MCP Apps server lists its page tools to
	// hosts that render them); nil when the offer has none.
	listCaps json.RawMessage

	refresh chan struct{} // list_changed received: re-list what is dirty
	dirty   ListKind
	stop    context.CancelFunc
	stopped chan struct{}
}

// New returns the upstream for opts.Server. Nothing connects until
// [Upstream.Start].
func New(opts Options) *Upstream {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Server.Timeout <= 0 {
		opts.Server.Timeout = config.DefaultTimeout
	}
	u := &Upstream{
		cfg:     opts.Server,
		log:     opts.Logger.With("server", opts.Server.Name),
		opts:    opts,
		changed: make(chan struct{}),
		state:   StateConnecting,
		refresh: make(chan struct{}, 1),
		stopped: make(chan struct{}),

		listed:     map[ListKind]listing{},
		listenWake: make(chan struct{}, 1),
		acked:      make(chan struct{}, 1),
	}
	u.clientInfo, _ = json.Marshal(map[string]string{"name": opts.ClientName, "version": opts.ClientVersion})
	if u.cfg.Transport == config.TransportHTTPStreamable {
		u.hc = newHTTPClient(u.wrap())
	}
	u.h.maxMessage = int(opts.Server.MaxResultBytes)
	if u.h.maxMessage == 0 {
		u.h.maxMessage = config.DefaultMaxResultBytes
	}
	if opts.OnNotify != nil {
		u.h.notify = func(method string, params json.RawMessage) { opts.OnNotify(u, method, params) }
	}
	if opts.OnRequest != nil {
		u.h.request = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return opts.OnRequest(ctx, u, method, params)
		}
	}
	return u
}

// Name is the server's name from the config.
func (u *Upstream) Name() string { return u.cfg.Name }

// Config is the server's configuration.
func (u *Upstream) Config() *config.Server { return &u.cfg }

// State reports the connection state and, when not ready, the last error.
func (u *Upstream) State() (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state, u.lastErr
}

// InitializeResult is the upstream's raw initialize result (nil before the
// first connection).
func (u *Upstream) InitializeResult() json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.initRes
}

// Tools is the last tool listing, in the upstream's order.
func (u *Upstream) Tools() []Item {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools
}

// Lists returns the last resource, resource template and prompt
// listings; nil for what the upstream does not offer.
func (u *Upstream) Lists() (resources, templates, prompts []Item) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.resources, u.templates, u.prompts
}

// Capabilities is what the upstream declared at its last initialize.
func (u *Upstream) Capabilities() Capabilities {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.caps
}

// SetLogLevel remembers level for every future connection and sends it
// with logging/setLevel now when connected to an upstream that logs.
func (u *Upstream) SetLogLevel(ctx context.Context, level string) {
	u.mu.Lock()
	u.logLevel = level
	c, logs := u.c, u.caps.Logging != nil
	u.mu.Unlock()
	if c == nil || !logs || isModern(c) {
		// 2026-07-28 has no logging/setLevel: the level goes with every
		// request's envelope instead.
		return
	}
	if _, err := c.Call(ctx, "logging/setLevel", map[string]any{"level": level}); err != nil {
		u.log.Warn("forwarding logging/setLevel failed", "level", level, "error", err)
	}
}

// RaiseLogLevel makes a 2025 upstream that logs log at least as much as
// level asks (logging/setLevel, before it returns) when its level asks for
// less: a 2026-07-28 client's request names the level it wants its log
// messages at, and a 2025 upstream sends none until told a level. The
// level stays raised (a later [Upstream.SetLogLevel] sets it again);
// each recipient filters by its own level. A 2026-07-28 upstream takes
// the level with each request instead: nothing is sent.
func (u *Upstream) RaiseLogLevel(ctx context.Context, level string) {
	u.mu.Lock()
	c, logs := u.c, u.caps.Logging != nil
	if c == nil || !logs || isModern(c) || !wire.MoreVerbose(level, u.logLevel) {
		u.mu.Unlock()
		return
	}
	u.logLevel = level
	u.mu.Unlock()
	if _, err := c.Call(ctx, "logging/setLevel", map[string]any{"level": level}); err != nil {
		u.log.Warn("forwarding logging/setLevel failed", "level", level, "error", err)
	}
}

// Start runs the supervisor until ctx ends or [Upstream.Close], and
// returns at once. offer is the client capabilities sent at initialize;
// nil offers sampling, elicitation and roots (with listChanged). Call it
// once.
func (u *Upstream) Start(ctx context.Context, offer map[string]any) {
	if offer == nil {
		offer = DefaultOffer()
	}
	u.offer = offer
	u.offerJSON, _ = json.Marshal(offer)
	if ext, ok := offer["extensions"]; ok {
		u.listCaps, _ = json.Marshal(map[string]any{"extensions": ext})
	}
	ctx, u.stop = context.WithCancel(ctx)
	go u.supervise(ctx)
}

// DefaultOffer is the client capabilities [Upstream.Start] offers when
// given none: sampling, elicitation (form and URL) and roots with
// listChanged.
func DefaultOffer() map[string]any {
	return map[string]any{
		"sampling":    map[string]any{},
		"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
		"roots":       map[string]any{"listChanged": true},
	}
}

// Close stops the supervisor and the connection (a process is ended, a
// streamable HTTP session deleted) and waits for both. Calls waiting for
// the upstream fail, and so do later calls. Close of an upstream never
// started only marks it stopped.
func (u *Upstream) Close() {
	if u.stop != nil {
		u.stop()
		<-u.stopped
	} else {
		u.setState(StateStopped, nil)
	}
	if u.hc != nil {
		u.hc.CloseIdleConnections()
	}
}

// setState records the state and wakes the calls waiting for it.
func (u *Upstream) setState(s string, err error) {
	u.mu.Lock()
	u.state, u.lastErr = s, err
	u.signalLocked()
	u.mu.Unlock()
}

// signalLocked wakes every call waiting for a change; u.mu is held.
func (u *Upstream) signalLocked() {
	close(u.changed)
	u.changed = make(chan struct{})
}

// wrap is the transport wrapper of [Options].Auth, nil without one.
func (u *Upstream) wrap() func(http.RoundTripper) http.RoundTripper {
	if u.opts.Auth == nil {
		return nil
	}
	return u.opts.Auth.Wrap
}
