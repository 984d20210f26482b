package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// Counter counts tokens; *tokens.Counter satisfies it.
type Counter interface {
	Count(b []byte) int
	AtLeast(b []byte, n int) bool
}

// Agent is what interception needs to know about the calling agent.
type Agent struct {
	Enabled bool    // [agent.scratchpad] enabled: false passes every result through
	Dir     string  // where this agent's diverted outputs are stored
	Counter Counter // the agent's model's tokens
	// OnIntercept is called once per diverted output with its exact token
	// count, possibly after the pointer was returned (large outputs are
	// counted to the end in the background). May be nil.
	OnIntercept func(tokens int)
}

// Options configures a [Router]. The zero value of each field is a usable
// default except Agent, which is required.
type Options struct {
	Servers []config.Server
	Logger  *slog.Logger
	// Version is sent as clientInfo.version to upstreams.
	Version string
	// Agent resolves the calling session's interception settings.
	Agent func(ctx context.Context) (*Agent, error)
	// Reserved names are the proxy's own tools: an unprefixed upstream tool
	// with one of these names is skipped with a warning.
	Reserved []string
	// ExactCountLimit is the output size in bytes up to which the pointer
	// waits for the exact token count; larger outputs get an estimate from
	// their first bytes and are counted exactly in the background. 0 means
	// 4 MiB.
	ExactCountLimit int
	// ProgressDelay is how long diverting may run before a caller that
	// passed a progressToken is sent notifications/progress for it
	// ("counting tokens", "writing file"). 0 means 200ms; a negative
	// value reports every stage at once.
	ProgressDelay time.Duration
	// StartWait bounds how long an initialize answer waits for upstreams
	// still in their first connection attempt, so that it can declare
	// their capabilities. 0 means 15s.
	StartWait time.Duration
	// StartOnFirstClient defers starting the upstreams from [Router.Start]
	// to the first client request, so that they can be told exactly the
	// sampling, elicitation and roots capabilities that client declared
	// at initialize. For a server with one client (stdio). Otherwise the
	// upstreams are offered all three, and each request they send is
	// checked against the capabilities of the client it goes to.
	StartOnFirstClient bool
}

// Router connects to every upstream, keeps the combined tool catalogue,
// forwards calls, and diverts large results. Create it with [New], start
// it with [Router.Start], attach it to an MCP server with [Router.Attach].
type Router struct {
	opts Options
	log  *slog.Logger
	ups  []*Upstream

	mu         sync.RWMutex
	routes     map[string]*route // exposed name → route
	registered map[string]string // exposed name → raw tool JSON as registered
	srv        *server.MCPServer
	syncMu     sync.Mutex

	progressSeq atomic.Int64
	progressMu  sync.Mutex
	progress    map[string]*progressRoute // upstream progress token → caller

	sess *sessions
	own  ownCaps
	sent sentRequests
	sse  sseFront

	stdioOut  *output // the stdio client's, once Output is called
	notes     pendingNotes
	startOnce sync.Once
	startCtx  context.Context // kept by Start under StartOnFirstClient
	cat       catalogue       // resources, resource templates and prompts
}

type route struct {
	up    *Upstream
	tool  string // the upstream's name for it
	raw   json.RawMessage
	order int // position in the combined listing (see addOrderHooks)
}

// progressRoute remembers the caller of an in-flight call: its request
// context (notifications sent with it travel on the caller's own stream)
// and its progress token.
type progressRoute struct {
	ctx   context.Context
	token any

	mu   sync.Mutex
	last float64 // highest progress sent: ours must keep increasing
}

// New returns a router for opts.Servers. Nothing connects until Start.
func New(opts Options) *Router {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ExactCountLimit == 0 {
		opts.ExactCountLimit = 4 << 20
	}
	if opts.ProgressDelay == 0 {
		opts.ProgressDelay = 200 * time.Millisecond
	}
	r := &Router{
		opts:       opts,
		log:        opts.Logger,
		routes:     map[string]*route{},
		registered: map[string]string{},
		progress:   map[string]*progressRoute{},
		sess:       newSessions(),
		cat:        newCatalogue(),
	}
	for _, sc := range opts.Servers {
		r.ups = append(r.ups, upstream.New(upstream.Options{
			Server:        sc,
			Logger:        opts.Logger,
			ClientName:    "scratchpad-mcp",
			ClientVersion: opts.Version,
			OnNotify:      r.onNotify,
			OnRequest: func(ctx context.Context, u *Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
				return r.onRequest(u, ctx, method, params)
			},
			OnListChanged: func(*Upstream) { r.sync() },
		}))
	}
	return r
}

// Upstreams lists the configured upstreams in config order.
func (r *Router) Upstreams() []*Upstream { return r.ups }

// Start connects to every upstream concurrently and returns at once; one
// that fails is logged and retried with backoff, never blocking the others.
// With [Options.StartOnFirstClient] it only keeps ctx: the first client
// request starts them.
func (r *Router) Start(ctx context.Context) {
	if r.opts.StartOnFirstClient {
		r.mu.Lock()
		r.startCtx = ctx
		r.mu.Unlock()
		return
	}
	r.startAll(ctx, upstream.DefaultOffer())
}

// startAll starts every upstream, once, offering them the client
// capabilities offer at initialize.
func (r *Router) startAll(ctx context.Context, offer map[string]any) {
	r.startOnce.Do(func() {
		for _, u := range r.ups {
			u.Start(ctx, offer)
		}
	})
}

// Close stops every upstream (their processes are ended).
func (r *Router) Close() {
	r.startOnce.Do(func() {}) // none starts after this
	var wg sync.WaitGroup
	for _, u := range r.ups {
		wg.Add(1)
		go func() { defer wg.Done(); u.Close() }()
	}
	wg.Wait()
}

// Attach registers the upstreams' tools, resources, resource templates
// and prompts on s and keeps them in sync. Call it once, after s has its
// own tools, resources and prompts and before it serves: it also enables
// the methods a transparent proxy serves (resources with subscribe and
// listChanged, prompts, logging, completions), installs completion
// providers that forward to the upstreams, and adds hooks (to the
// server's own [server.Hooks] when it has some) for sessions,
// logging/setLevel, resource subscriptions and initialize, whose answer
// waits for upstreams still connecting ([Options.StartWait]) and declares
// the server's own capabilities plus the union of its upstreams'.
func (r *Router) Attach(s *server.MCPServer) {
	r.mu.Lock()
	r.srv = s
	r.mu.Unlock()
	r.cat.reserve(s)
	r.noteOwn(s)
	for _, opt := range []server.ServerOption{
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completer{r}),
		server.WithResourceCompletionProvider(completer{r}),
	} {
		opt(s)
	}
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	r.addHooks(hooks)
	s.AddResourceTemplate(mcp.NewResourceTemplate(catchAllTemplate, "any resource an upstream serves"), r.readResource)
	r.addStartHook(hooks)
	r.addOrderHooks(hooks)
	r.addInitializeHook(hooks)
	s.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, r.onRootsChanged)
	r.sync()
}

// Tool describes one exposed upstream tool, for doctor and tests.
type Tool struct {
	Name      string // as exposed
	Server    string
	Upstream  string // the upstream's own name
	Threshold int    // 0 when never intercepted
}

// Tools lists the exposed upstream tools sorted by name.
func (r *Router) Tools() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Tool, 0, len(r.routes))
	for name, rt := range r.routes {
		t, _ := rt.up.Config().Threshold(rt.tool)
		out = append(out, Tool{Name: name, Server: rt.up.Config().Name, Upstream: rt.tool, Threshold: t})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// sync rebuilds the catalogue from every upstream's last listing and
// applies the difference to the MCP server, which tells clients
// notifications/tools/list_changed.
func (r *Router) sync() {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	reserved := map[string]bool{}
	for _, n := range r.opts.Reserved {
		reserved[n] = true
	}
	routes := map[string]*route{}
	owner := map[string]string{}
	order := 0
	for _, u := range r.ups {
		for _, t := range u.Tools() {
			if !u.Config().Allowed(t.Name) {
				continue
			}
			name := u.Config().ExposedName(t.Name)
			if reserved[name] {
				r.log.Warn("upstream tool skipped: the name is one of scratchpad-mcp's own tools; set a prefix for this server", "server", u.Config().Name, "tool", t.Name)
				continue
			}
			if prev, dup := owner[name]; dup {
				r.log.Warn("upstream tool skipped: name already exposed by another server; set a prefix", "tool", name, "server", u.Config().Name, "exposed_by", prev)
				continue
			}
			owner[name] = u.Config().Name
			routes[name] = &route{up: u, tool: t.Name, raw: t.Raw, order: order}
			order++
		}
	}
	r.mu.Lock()
	r.routes = routes
	srv := r.srv
	r.mu.Unlock()
	if srv == nil {
		return
	}
	var remove []string
	var add []server.ServerTool
	reconcile(r.registered, routes, func(name string) { remove = append(remove, name) },
		func(name string, rt *route) bool {
			tool, err := exposedTool(name, rt)
			if err != nil {
				r.log.Warn("upstream tool skipped: invalid definition", "server", rt.up.Config().Name, "tool", rt.tool, "error", err)
				return false
			}
			add = append(add, server.ServerTool{Tool: tool, Handler: r.handle})
			return true
		})
	if len(remove) > 0 {
		srv.DeleteTools(remove...)
	}
	if len(add) > 0 {
		srv.AddTools(add...)
	}
	r.syncCatalogue(srv)
}

// exposedTool rebuilds an upstream tool definition under its exposed
// name. The input schema is the upstream's raw bytes (mcp.Tool's schema
// struct would drop anyOf, oneOf and more). A tool that can be diverted
// loses its outputSchema: its pointer result has no structuredContent, and
// strict clients reject a result that lacks what the schema promises.
func exposedTool(name string, rt *route) (mcp.Tool, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rt.raw, &fields); err != nil {
		return mcp.Tool{}, err
	}
	input, output := fields["inputSchema"], fields["outputSchema"]
	delete(fields, "inputSchema")
	delete(fields, "outputSchema")
	rest, _ := json.Marshal(fields)
	var t mcp.Tool
	if err := json.Unmarshal(rest, &t); err != nil {
		return mcp.Tool{}, err
	}
	t.Name = name
	if len(input) == 0 || bytes.Equal(input, []byte("null")) {
		input = json.RawMessage(`{"type":"object"}`)
	}
	t.RawInputSchema = input
	if _, divertable := rt.up.Config().Threshold(rt.tool); !divertable && len(output) > 0 && !bytes.Equal(output, []byte("null")) {
		t.RawOutputSchema = output
	}
	return t, nil
}

func (r *Router) route(name string) *route {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.routes[name]
}

// handle forwards one tools/call and diverts its result when it is large.
func (r *Router) handle(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	defer r.notes.flush(ctx, notesFlushWait)
	rt := r.route(req.Params.Name)
	if rt == nil {
		return mcp.NewToolResultError(fmt.Sprintf("tool %q is not available: its upstream server is not connected or no longer lists it", req.Params.Name)), nil
	}
	params := map[string]any{"name": rt.tool}
	if len(req.Params.RawArguments) > 0 {
		params["arguments"] = req.Params.RawArguments
	} else if req.Params.Arguments != nil {
		params["arguments"] = req.Params.Arguments
	}
	var pr *progressRoute
	if m := r.forwardMeta(ctx, req.Params.Meta); m != nil {
		params["_meta"] = m
		if tok, ok := m["progressToken"].(string); ok {
			pr = r.progressFor(tok)
			defer r.forgetProgress(tok)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, rt.up.Config().Timeout)
	defer cancel()
	end := r.sess.begin(rt.up, cctx)
	raw, err := rt.up.Call(cctx, "tools/call", params)
	end()
	if err != nil {
		var rerr *RPCError
		switch {
		case errors.As(err, &rerr):
			return nil, forwardError(ctx, rerr)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, ErrUpstreamUnavailable):
			// Names the upstream and its last error; checked before the
			// deadline, which may end at the same moment as the wait.
			return mcp.NewToolResultError(err.Error()), nil
		case errors.Is(cctx.Err(), context.DeadlineExceeded):
			return mcp.NewToolResultError(fmt.Sprintf("upstream %q did not answer %s within %s (timeout in [mcp.servers.%s]); try again or raise the timeout", rt.up.Config().Name, rt.tool, rt.up.Config().Timeout, rt.up.Config().Name)), nil
		default:
			return mcp.NewToolResultError(fmt.Sprintf("calling %s on upstream %q failed: %v", rt.tool, rt.up.Config().Name, err)), nil
		}
	}
	return r.finish(ctx, rt, raw, pr)
}

// finish decides whether raw (a tools/call result) passes through or is
// diverted, and builds the reply. pr, when the caller asked for progress,
// is told how diverting goes.
func (r *Router) finish(ctx context.Context, rt *route, raw json.RawMessage, pr *progressRoute) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("upstream %q returned an invalid tools/call result for %s: %v", rt.up.Config().Name, rt.tool, err)), nil
	}
	threshold, ok := rt.up.Config().Threshold(rt.tool)
	if !ok || res.IsError {
		return &res, nil
	}
	agent, err := r.opts.Agent(ctx)
	if err != nil {
		return mcp.NewToolResultError("scratchpad-mcp: " + err.Error()), nil
	}
	if !agent.Enabled {
		return &res, nil
	}
	visible, payload, divertable := modelView(&res)
	if !divertable {
		return &res, nil
	}
	rep := r.newDivertProgress(pr)
	defer rep.stop()
	rep.stage("counting tokens")
	if !agent.Counter.AtLeast(visible, threshold) {
		return &res, nil
	}
	start := time.Now()
	rep.stage("writing file")
	st, err := Save(agent.Dir, rt.up.Config().Name, rt.tool, payload)
	if err != nil {
		r.log.Error("diverting output failed", "server", rt.up.Config().Name, "tool", rt.tool, "error", err)
		return mcp.NewToolResultError(fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) could not be saved to the scratchpad, so it was not returned either: %v. Free disk space or fix memory_dir, then call the tool again.",
			rt.tool, commas(len(payload)), commas(threshold), err)), nil
	}
	p := Pointer{Server: rt.up.Config().Name, Tool: rt.tool, Stored: st, Threshold: threshold}
	rep.stage("counting tokens")
	if len(visible) <= r.opts.ExactCountLimit {
		p.Tokens = agent.Counter.Count(visible)
		if agent.OnIntercept != nil {
			agent.OnIntercept(p.Tokens)
		}
	} else {
		// Estimate from the first 1 MiB; count the whole in the background
		// for the budget so the reply is not held.
		prefix := visible[:1<<20]
		p.Tokens = int(float64(agent.Counter.Count(prefix)) * float64(len(visible)) / float64(len(prefix)))
		p.Estimated = true
		go func() {
			n := agent.Counter.Count(visible)
			if agent.OnIntercept != nil {
				agent.OnIntercept(n)
			}
		}()
	}
	elapsed := time.Since(start)
	r.log.Info("intercepted", "server", rt.up.Config().Name, "tool", rt.tool, "tokens", p.Tokens, "estimated", p.Estimated, "file", st.Name, "bytes", st.Bytes, "elapsed", elapsed.String())
	out := mcp.NewToolResultText(p.Text(payload))
	out.Meta = mcp.NewMetaFromMap(map[string]any{"scratchpad/diverted": map[string]any{
		"file": st.Name, "format": st.Format, "tokens": p.Tokens, "estimated": p.Estimated,
		"bytes": st.Bytes, "lines": st.Lines, "threshold": threshold, "server": rt.up.Config().Name, "tool": rt.tool,
		"elapsed_ms": float64(elapsed.Microseconds()) / 1000,
	}})
	return out, nil
}

// modelView extracts what the model would read (text contents, text of
// embedded resources, structuredContent) and what to store (the text, or
// the structured content when there is no text). A result with image or
// audio content is never diverted.
func modelView(res *mcp.CallToolResult) (visible, payload []byte, divertable bool) {
	var texts [][]byte
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			texts = append(texts, []byte(v.Text))
		case mcp.EmbeddedResource:
			if t, ok := v.Resource.(mcp.TextResourceContents); ok {
				texts = append(texts, []byte(t.Text))
			}
		case mcp.ImageContent, mcp.AudioContent:
			return nil, nil, false
		}
	}
	payload = bytes.Join(texts, []byte("\n"))
	visible = payload
	if len(res.RawStructuredContent) > 0 {
		if len(visible) == 0 {
			payload = res.RawStructuredContent
			visible = payload
		} else {
			visible = append(append(append([]byte{}, visible...), '\n'), res.RawStructuredContent...)
		}
	}
	return visible, payload, len(payload) > 0
}
