package proxy

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/reference"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// Options configures a [Proxy]. The zero value of each field is a usable
// default. Who a request is for is no option: it comes with each
// [Request].
type Options struct {
	Servers []config.Server
	Logger  *slog.Logger
	// Version is sent as clientInfo.version to upstreams.
	Version string
	// Reserved are the proxy's own tool names, resource URIs and prompt
	// names: an upstream item with one of these exposed names is skipped
	// (tools, prompts) or exposed under a server prefix (resources).
	ReservedTools, ReservedResources, ReservedPrompts []string
	// ExactCountLimit: see [divert.Options.ExactCountLimit].
	ExactCountLimit int
	// ProgressDelay is how long diverting may run before a caller that
	// passed a progressToken is sent notifications/progress for it
	// ("storing 20,971,520 bytes", "stored …; counting their tokens").
	// 0 means 200ms; a negative value reports every stage at once.
	ProgressDelay time.Duration
	// StartWait bounds how long an initialize answer waits for upstreams
	// still in their first connection attempt. 0 means 15s.
	StartWait time.Duration
	// StragglerWait bounds how much longer it waits for upstreams still
	// starting once one is ready. 0 means [DefaultStragglerWait].
	StragglerWait time.Duration
	// OnChange is called, off any read loop, after the exposed catalogue
	// changed: the server tells its clients (list_changed).
	OnChange func(Kind)
	// Search is [catalogue] mode = "search": upstream tools are found
	// with search_tools and run with call_tool (see [Proxy.SearchTools]);
	// only servers with listing = "always" are listed.
	Search bool

	// shared are upstreams a [Pool] made once for every owner's proxy,
	// by server name: this proxy uses them but neither starts nor stops
	// them.
	shared map[string]*upstream.Upstream

	// Authorize, when set, gives the authorizer of a remote server for
	// owner (see [upstream.Options].Auth): OAuth for those with
	// [mcp.servers.NAME.auth], with that owner's credentials. It returns
	// nil for servers without.
	Authorize func(owner string, sc config.Server) upstream.Authorizer
	// Owner is the bearer token's owner this proxy serves ([Pool] sets
	// it); "" without bearer tokens.
	Owner string
	// Redact, when set, gives the redactor of a server's results (its
	// [config.Config.RedactionMode]), nil for a server whose mode is off:
	// every tools/call, resources/read and prompts/get result passes it
	// before it is counted, stored or shown. nil redacts nothing.
	Redact func(sc *config.Server) *redact.Redactor
	// Missing are the configured servers left out because their table
	// needs an environment variable that is not set: not started, but
	// named, with the variable, where a tool is not found
	// ([Proxy.DownServers]; missing.go).
	Missing []config.SkippedServer
	// Telemetry gets a client span per upstream request (its
	// traceparent sent in the request's _meta), the divert's span and
	// token counts, and upstream restarts. nil is off.
	Telemetry *telemetry.Provider
}

// Kind says which listing changed.
type Kind uint8

// The listings a [Proxy] exposes.
const (
	KindTools Kind = 1 << iota
	KindResources
	KindPrompts
)

// Proxy connects to every upstream, keeps the combined catalogue, routes
// calls, and routes what upstreams send on their own (notifications,
// requests) to the right client [Session]. Create it with [New], start
// it with [Proxy.Start].
type Proxy struct {
	opts Options
	log  *slog.Logger
	ups  []*upstream.Upstream
	// own are the upstreams this proxy started and stops: all but
	// the shared ones.
	own []*upstream.Upstream

	cat      catalogue
	sessions sessions

	progressMu sync.Mutex
	progress   map[string]*progressRoute // upstream progress token → caller

	startOnce sync.Once
	tasks     taskTools // which tool made each task (tasks.go)

	schemas reference.Schemas // the listed input schemas, read once (references.go)
}

// New returns a proxy for opts.Servers. Nothing connects until Start.
func New(opts Options) *Proxy {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ProgressDelay == 0 {
		opts.ProgressDelay = 200 * time.Millisecond
	}
	if opts.StartWait == 0 {
		opts.StartWait = 15 * time.Second
	}
	if opts.StragglerWait == 0 {
		opts.StragglerWait = DefaultStragglerWait
	}
	p := &Proxy{
		opts:     opts,
		log:      opts.Logger,
		progress: map[string]*progressRoute{},
		sessions: newSessions(),
	}
	reserved := opts.ReservedTools
	if opts.Search {
		reserved = append(append([]string(nil), reserved...), SearchToolName, CallToolName)
	}
	p.cat.reserve(reserved, opts.ReservedResources, opts.ReservedPrompts)
	p.cat.search = opts.Search
	p.cat.mask = p.mask
	for _, sc := range opts.Servers {
		if u := opts.shared[sc.Name]; u != nil {
			p.ups = append(p.ups, u)
			continue
		}
		var auth upstream.Authorizer
		if opts.Authorize != nil {
			auth = opts.Authorize(opts.Owner, sc)
		}
		u := upstream.New(upstream.Options{
			Auth:   auth,
			Server: sc, Logger: opts.Logger,
			ClientName: "scratchpad-mcp", ClientVersion: opts.Version,
			OnNotify:      p.onNotify,
			OnRequest:     p.onRequest,
			OnListChanged: func(*upstream.Upstream) { p.sync() },
			OnRestart:     p.restarted,
		})
		p.ups = append(p.ups, u)
		p.own = append(p.own, u)
	}
	return p
}

// progressSeq numbers the progress tokens sent to upstreams: unique
// across every proxy of a process, since a shared upstream serves
// several ([Pool]).
var progressSeq atomic.Int64

// isShared reports whether u is a [Pool]'s shared upstream.
func (p *Proxy) isShared(u *upstream.Upstream) bool {
	return p.opts.shared[u.Name()] == u
}

// Upstreams lists the configured upstreams in config order.
func (p *Proxy) Upstreams() []*upstream.Upstream { return p.ups }

// Start connects to every upstream concurrently, once, and returns at
// once; one that fails is logged and retried with backoff, never blocking
// the others. offer is the client capabilities upstreams are told at
// initialize: nil offers everything the proxy forwards (sampling,
// elicitation, roots), and each request is then checked against the
// capabilities of the client it goes to. A server with one client passes
// what that client declared ([MirrorOffer]).
func (p *Proxy) Start(ctx context.Context, offer map[string]any) {
	p.startOnce.Do(func() {
		if offer == nil {
			offer = DefaultOffer()
		}
		for _, u := range p.own {
			u.Start(ctx, offer)
		}
	})
}

// DefaultStragglerWait is [Options].StragglerWait's default: enough for
// servers started together to come up together, short enough that a hung
// one is not waited for.
const DefaultStragglerWait = 750 * time.Millisecond

// Close stops every upstream it started (their processes are ended).
func (p *Proxy) Close() {
	p.startOnce.Do(func() {}) // none starts after this
	var wg sync.WaitGroup
	for _, u := range p.own {
		wg.Add(1)
		go func() { defer wg.Done(); u.Close() }()
	}
	wg.Wait()
}

// AwaitStarted waits until no upstream is in its first connection
// attempt, or max has passed, or ctx ends; and once some upstream is
// ready, no more than StragglerWait for the others: one server that hangs
// at start does not hold up the tools of those that are up (it joins with
// list_changed when it comes). An upstream that is restarting is not
// waited for: it was ready once, and list_changed announces its return.
func (p *Proxy) AwaitStarted(ctx context.Context, max time.Duration) {
	p.await(ctx, max, p.opts.StragglerWait)
}

// AwaitAll is [Proxy.AwaitStarted] with a longer straggler bound,
// [DefaultAllWait]: for a client's first listing, which a client that
// lists once must find whole — every server that comes up within seconds
// (a slow npx start, a loaded machine), not only the first one's — while
// one that hangs at start holds it up only that long.
func (p *Proxy) AwaitAll(ctx context.Context) { p.await(ctx, 0, DefaultAllWait) }

// DefaultAllWait bounds how long [Proxy.AwaitAll] waits for upstreams
// still starting once one is ready: npx-launched servers take 2–4 s to
// answer initialize on a loaded machine.
const DefaultAllWait = 5 * time.Second

// await is AwaitStarted with straggler bound straggler (0: none).
func (p *Proxy) await(ctx context.Context, max, straggler time.Duration) {
	if max <= 0 {
		max = p.opts.StartWait
	}
	start := time.Now()
	deadline := start.Add(max)
	straggle := start.Add(straggler)
	if straggler <= 0 {
		straggle = deadline
	}
	for {
		starting, ready := false, false
		for _, u := range p.ups {
			switch st, _ := u.State(); st {
			case upstream.StateConnecting:
				starting = true
			case upstream.StateReady:
				ready = true
			}
		}
		now := time.Now()
		if !starting || now.After(deadline) || ready && now.After(straggle) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Starting reports whether an upstream is still connecting (its first
// start).
func (p *Proxy) Starting() bool { return len(p.StartingServers()) > 0 }

// DownServers says which upstreams are down (failed, or restarting after
// a failure, or not loaded for a missing variable: [Options].Missing) and
// why: "name (reason)", for an error a model can relay.
func (p *Proxy) DownServers() []string {
	var out []string
	for _, u := range p.ups {
		st, err := u.State()
		if st != upstream.StateFailed && st != upstream.StateRestarting {
			continue
		}
		why := st
		if err != nil {
			why = err.Error()
		}
		out = append(out, fmt.Sprintf("%s (%s)", u.Name(), tool.Clip(why, 300)))
	}
	return append(out, p.missingServers()...)
}

// StartingServers names the upstreams still in their first connection
// attempt.
func (p *Proxy) StartingServers() []string {
	var out []string
	for _, u := range p.ups {
		if st, _ := u.State(); st == upstream.StateConnecting {
			out = append(out, u.Name())
		}
	}
	return out
}

// Tool describes one exposed upstream tool, for doctor and tests.
type Tool struct {
	Name      string // as exposed
	Server    string
	Upstream  string // the upstream's own name
	Threshold int    // 0 when never intercepted
}

// Tools lists the exposed upstream tools sorted by name.
func (p *Proxy) Tools() []Tool {
	routes := p.cat.snapshot().tools.byKey
	out := make([]Tool, 0, len(routes))
	for name, rt := range routes {
		t, _ := rt.up.Config().Threshold(rt.orig)
		out = append(out, Tool{Name: name, Server: rt.up.Name(), Upstream: rt.orig, Threshold: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sync rebuilds the catalogue from every upstream's last listing and
// tells the server what changed.
func (p *Proxy) sync() {
	if changed := p.cat.rebuild(p.ups, p.log); changed != 0 && p.opts.OnChange != nil {
		p.opts.OnChange(changed)
	}
}
