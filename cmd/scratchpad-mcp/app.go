package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// app is one assembled server: the MCP server, the upstream proxy, the
// agent registry and the usage events. Built by newApp, used by serve,
// doctor and the tests.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	def    agents.Identity
	server *server.Server
	proxy  *proxy.Proxy
	agents *agents.Registry
	events *budget.Events

	// What every session gets of the server's own.
	explore   []tool.Def
	artifacts []tool.Def
	pad       []tool.Def
	padRes    []tool.Resource
	padPrompt []tool.Prompt
	watcher   *pad.Watcher

	debugStats bool // serve GET /debug/stats over HTTP
}

// upstreamStartWait bounds how long initialize and the first tools/list
// wait for upstreams still starting (npx-launched servers take seconds).
const upstreamStartWait = 15 * time.Second

// padCheckWait bounds the start-up PING of a Redis pad backend.
const padCheckWait = 5 * time.Second

// usageMetaKey is where a client reports the model's real usage in a
// tools/call request's _meta.
const usageMetaKey = "scratchpad/usage"

// appOptions are what differs between the ways the server is run; the
// zero value suits several clients (HTTP, SSE) and doctor.
type appOptions struct {
	// OneClient means the server has exactly one client (stdio): the
	// upstreams start with its initialize and are told the sampling,
	// elicitation and roots capabilities it declared.
	OneClient bool
	// Start is the context the upstreams run in under OneClient.
	Start context.Context
}

func newApp(cfg *config.Config, log *slog.Logger, def agents.Identity, opts appOptions) (*app, error) {
	if err := agents.Check(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", configName(cfg), err)
	}
	// A Redis pad that cannot be reached fails the start, not the first call.
	ctx, cancel := context.WithTimeout(context.Background(), padCheckWait)
	err := agents.CheckPad(ctx, cfg.Pad)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", configName(cfg), err)
	}
	var usagePath func(owner string) string
	if cfg.MemoryDir != "" {
		usagePath = func(owner string) string { return layout.For(cfg.MemoryDir, owner).Usage() }
	}
	a := &app{cfg: cfg, log: log, def: def, events: budget.NewEvents(usagePath)}
	counter := tokens.ForModel(cfg.Agent.Provider, cfg.Agent.Model)
	// Load the encoding while the client initializes: the first count
	// would otherwise pay for it.
	counter.Preload()
	log.Info("tokens", "model", cfg.Agent.Model, "provider", cfg.Agent.Provider, "encoding", counter.Name())

	var cache *explore.Cache
	if cfg.Explore.CacheBytes > 0 {
		cache = explore.NewCache(cfg.Explore.CacheBytes)
	}
	a.agents = agents.NewRegistry(agents.Options{
		Config: cfg, Logger: log, Default: def, Cache: cache, Events: a.events,
		Carried: a.carried,
	})
	a.explore = explore.Tools(func(ctx context.Context) (*explore.Env, error) {
		ag, err := a.agents.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Explore(), nil
	})
	a.artifacts = artifacts.Tools(func(ctx context.Context) (*artifacts.Env, error) {
		ag, err := a.agents.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Artifacts()
	})
	if cfg.Pad.Enabled {
		popts, err := agents.PadOptions(cfg.Pad)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", configName(cfg), err)
		}
		padFor := func(ctx context.Context) (*pad.Pad, error) {
			ag, err := a.agents.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Pad()
		}
		a.watcher = pad.NewWatcher()
		a.pad, err = pad.Tools(padFor, popts, a.watcher)
		if err != nil {
			return nil, fmt.Errorf("%s: [pad]: %w", configName(cfg), err)
		}
		a.padRes = []tool.Resource{pad.Resource(padFor)}
		a.padPrompt = []tool.Prompt{pad.Prompt(padFor)}
	}
	var reservedTools, reservedRes, reservedPrompts []string
	for _, d := range a.ownTools(agents.Identity{Role: agents.RoleCoordinator}) {
		reservedTools = append(reservedTools, d.Name)
	}
	for _, r := range a.padRes {
		reservedRes = append(reservedRes, r.URI)
	}
	for _, p := range a.padPrompt {
		reservedPrompts = append(reservedPrompts, p.Name)
	}
	a.proxy = proxy.New(proxy.Options{
		Servers: cfg.Servers, Logger: log, Version: versionString(),
		ReservedTools: reservedTools, ReservedResources: reservedRes, ReservedPrompts: reservedPrompts,
		StartWait: upstreamStartWait,
		Agent: func(ctx context.Context) (*divert.Agent, error) {
			ag, err := a.agents.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Divert(), nil
		},
		OnChange: func(k proxy.Kind) {
			if a.server != nil {
				a.server.Changed(k)
			}
		},
	})
	var start context.Context
	if opts.OneClient {
		start = opts.Start
		if start == nil {
			start = context.Background()
		}
	}
	a.server = server.New(server.Options{
		Name: "scratchpad-mcp", Version: versionString(), Instructions: instructions(cfg.Agent), Logger: log,
		Proxy:          a.proxy,
		Session:        a.session,
		InitializeMeta: limitsMeta(cfg.Agent),
		StartUpstreams: start,
		ToolCall:       a.accounting,
		SessionEnded:   a.agents.Finish,
		Owner:          func(r *http.Request) string { return tokenOwner(r.Context()) },
	})
	return a, nil
}

// ownTools is what an agent of identity id is offered of the server's
// own tools: exploration, the pad, and the artifact tools (writing only
// for coordinators).
func (a *app) ownTools(id agents.Identity) []tool.Def {
	out := append([]tool.Def{}, a.explore...)
	out = append(out, a.pad...)
	for _, d := range a.artifacts {
		if d.Name == artifacts.ToolWrite && id.Role != agents.RoleCoordinator {
			continue
		}
		out = append(out, d)
	}
	return out
}

// session is what one client session gets: its identity (stdio: the
// command line; HTTP: the headers of the request that created it, and
// its bearer token's owner) in every request's context, and its tools.
func (a *app) session(info server.SessionInfo) (*server.Own, error) {
	id := a.def
	if r := info.Request; r != nil {
		hid, err := agents.FromRequest(r)
		if err != nil {
			return nil, err
		}
		if owner := tokenOwner(r.Context()); owner != "" {
			hid.Owner = owner
		}
		id = hid
	}
	norm, err := id.Normalize()
	if err != nil {
		return nil, err
	}
	own := &server.Own{
		Context: func(ctx context.Context, h http.Header) context.Context {
			ctx = agents.WithSession(ctx, info.ID)
			cur := norm
			if h != nil {
				// Per-request figures (X-Scratchpad-Context-Tokens);
				// who the agent is was fixed when the session began.
				if n, err := strconv.Atoi(h.Get(agents.HeaderContextTokens)); err == nil && n > 0 {
					cur.ContextTokens = n
				}
			}
			return agents.WithIdentity(ctx, cur)
		},
		Tools:     a.ownTools(norm),
		Resources: a.padRes,
		Prompts:   a.padPrompt,
		// The agent's own limits: a worker with overrides is told its
		// numbers, not [agent]'s.
		Instructions:   instructions(a.cfg.AgentFor(norm.Agent)),
		InitializeMeta: limitsMeta(a.cfg.AgentFor(norm.Agent)),
	}
	if a.watcher != nil {
		own.Watch = func(ctx context.Context, uri string, notify func()) func() {
			ag, err := a.agents.Resolve(ctx)
			if err != nil {
				return func() {}
			}
			p, err := ag.Pad()
			if err != nil {
				return func() {}
			}
			sub := info.ID + " " + uri
			a.watcher.Subscribe(sub, p, notify)
			return func() { a.watcher.Unsubscribe(sub) }
		}
	}
	return own, nil
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "defaults"
	}
	return cfg.Path
}

func contextWindow(ag config.Agent) int {
	if ag.ContextWindow > 0 {
		return ag.ContextWindow
	}
	if w, ok := budget.ContextWindowFor(ag.Model); ok {
		return w
	}
	return agents.DefaultContextWindow
}

// limitsMeta is the initialize result's _meta["scratchpad/limits"]: the
// agent's effective limits.
func limitsMeta(ag config.Agent) map[string]any {
	sc := ag.Scratchpad
	return map[string]any{"scratchpad/limits": map[string]any{
		"max_extraction_tokens": sc.MaxExtractionTokens,
		"turn_depth_bonus":      sc.TurnDepthBonus,
		"context_window":        contextWindow(ag),
		"context_safety_margin": sc.ContextSafetyMargin,
	}}
}

// instructions is the initialize instructions for an agent of settings
// ag: how the model should treat pointers, and the limits an
// orchestrator may plan with.
func instructions(ag config.Agent) string {
	sc := ag.Scratchpad
	return strings.TrimSpace(fmt.Sprintf(`scratchpad-mcp keeps your context clean. A tool result at or above its token threshold is saved to a file and you receive a short pointer (file name, size, shape, ready-to-run calls) instead. Explore stored files with head, slice, grep, schema, item_schema, get_in, iterate_over, count_by and read (iterate_over, get_in and count_by take a JSONPath filter such as ?(@.status.phase == 'Failed'); grep without a file searches every stored output); each returns at most %d tokens per call and every result ends with a footer saying what was returned and how much of your budget is left. A result too large comes back as {"error": "<tool>_too_large", ...} with ready-to-run suggestions: run one of them. Keep working notes with read_scratchpad, update_scratchpad and append_scratchpad.
Limits: max_extraction_tokens=%d, context_window=%d, turn_depth_bonus=%d.`,
		sc.MaxExtractionTokens, sc.MaxExtractionTokens, contextWindow(ag), sc.TurnDepthBonus))
}

// carried counts what an agent already holds from this server before its
// first call: the tool definitions it was listed and the instructions.
func (a *app) carried(id agents.Identity, settings config.Agent, count func(string) int) int {
	defs := a.ownTools(id)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	b, _ := json.Marshal(defs)
	return count(string(b)) + count(instructions(settings))
}

// accounting runs before every tool call: it counts the call for usage,
// takes the model's real usage when the client reports it in _meta, and
// names the agent for the pad's ledger.
func (a *app) accounting(ctx context.Context, _ string, meta map[string]any) (context.Context, error) {
	ag, err := a.agents.Resolve(ctx)
	if err != nil {
		return ctx, fmt.Errorf("scratchpad-mcp: %w", err)
	}
	ag.Budget.CountCall()
	if in, out, ok := reportedUsage(meta); ok {
		ag.Budget.ObserveUsage(in, out)
	}
	return pad.WithAuthor(ctx, ag.ID.Agent), nil
}

// reportedUsage reads _meta["scratchpad/usage"] = {input_tokens, output_tokens}.
func reportedUsage(m map[string]any) (in, out int, ok bool) {
	u, isMap := m[usageMetaKey].(map[string]any)
	if !isMap {
		return 0, 0, false
	}
	num := func(k string) int {
		switch v := u[k].(type) {
		case float64:
			return int(v)
		case json.Number:
			n, _ := v.Int64()
			return int(n)
		}
		return 0
	}
	in, out = num("input_tokens"), num("output_tokens")
	return in, out, in > 0 || out > 0
}
