package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/intercept"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// app is one assembled server: the MCP server, the upstream router, the
// agent registry and the usage events. Built by newApp, used by serve,
// doctor and the tests.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	mcp    *server.MCPServer
	router *intercept.Router
	agents *agents.Registry
	events *budget.Events
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
	a := &app{cfg: cfg, log: log, events: budget.NewEvents(cfg.MemoryDir)}
	counter := tokens.ForModel(cfg.Agent.Provider, cfg.Agent.Model)
	// Load the encoding while the client initializes: the first count
	// would otherwise pay for it.
	counter.Preload()
	log.Info("tokens", "model", cfg.Agent.Model, "provider", cfg.Agent.Provider, "encoding", counter.Name())

	hooks := &server.Hooks{}
	var cache *explore.Cache
	if cfg.Explore.CacheBytes > 0 {
		cache = explore.NewCache(cfg.Explore.CacheBytes)
	}
	a.agents = agents.NewRegistry(agents.Options{
		Config: cfg, Logger: log, Default: def, Cache: cache, Events: a.events,
		Carried: a.carried,
	})
	artifactEnv := func(ctx context.Context) (*artifacts.Env, error) {
		ag, err := a.agents.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Artifacts()
	}
	a.mcp = server.NewMCPServer("scratchpad-mcp", versionString(),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithInstructions(instructions(cfg)),
		server.WithToolFilter(mcpgoArtifactFilter(artifactEnv)),
		server.WithToolHandlerMiddleware(a.accounting),
	)
	// A client usually lists tools once, right after initialize: hold
	// that answer until the upstreams that are still starting are up (or
	// failed), bounded, so it does not miss their tools. Later lists are
	// not held: list_changed covers upstreams that come back.
	hooks.AddBeforeListTools(func(ctx context.Context, id any, req *mcp.ListToolsRequest) {
		a.router.AwaitStarted(ctx, upstreamStartWait)
	})
	hooks.AddOnUnregisterSession(func(ctx context.Context, s server.ClientSession) {
		a.agents.Finish(s.SessionID())
	})
	hooks.AddAfterInitialize(func(ctx context.Context, id any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		sc := cfg.Agent.Scratchpad
		res.Meta = mcp.NewMetaFromMap(map[string]any{"scratchpad/limits": map[string]any{
			"max_extraction_tokens": sc.MaxExtractionTokens,
			"turn_depth_bonus":      sc.TurnDepthBonus,
			"context_window":        contextWindow(cfg.Agent),
			"context_safety_margin": sc.ContextSafetyMargin,
		}})
	})

	a.mcp.AddTools(mcpgoTools(explore.Tools(func(ctx context.Context) (*explore.Env, error) {
		ag, err := a.agents.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Explore(), nil
	}))...)
	a.mcp.AddTools(mcpgoTools(artifacts.Tools(artifactEnv))...)
	if cfg.Pad.Enabled {
		opts, err := agents.PadOptions(cfg.Pad)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", configName(cfg), err)
		}
		err = addMCPGoPad(a.mcp, func(ctx context.Context) (*pad.Pad, error) {
			ag, err := a.agents.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Pad()
		}, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: [pad]: %w", configName(cfg), err)
		}
	}
	var reserved []string
	for name := range a.mcp.ListTools() {
		reserved = append(reserved, name)
	}
	a.router = intercept.New(intercept.Options{
		Servers: cfg.Servers, Logger: log, Version: versionString(), Reserved: reserved,
		StartWait: upstreamStartWait, StartOnFirstClient: opts.OneClient,
		Agent: func(ctx context.Context) (*intercept.Agent, error) {
			ag, err := a.agents.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Intercept(), nil
		},
	})
	a.router.Attach(a.mcp)
	return a, nil
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

// instructions is the server's initialize instructions: how the model
// should treat pointers, and the limits an orchestrator may plan with.
func instructions(cfg *config.Config) string {
	sc := cfg.Agent.Scratchpad
	return strings.TrimSpace(fmt.Sprintf(`scratchpad-mcp keeps your context clean. A tool result at or above its token threshold is saved to a file and you receive a short pointer (file name, size, shape, ready-to-run calls) instead. Explore stored files with head, slice, grep, schema, item_schema, get_in, iterate_over, count_by and read (iterate_over, get_in and count_by take a JSONPath filter such as ?(@.status.phase == 'Failed'); grep without a file searches every stored output); each returns at most %d tokens per call and every result ends with a footer saying what was returned and how much of your budget is left. A result too large comes back as {"error": "<tool>_too_large", ...} with ready-to-run suggestions: run one of them. Keep working notes with read_scratchpad, update_scratchpad and append_scratchpad.
Limits: max_extraction_tokens=%d, context_window=%d, turn_depth_bonus=%d.`,
		sc.MaxExtractionTokens, sc.MaxExtractionTokens, contextWindow(cfg.Agent), sc.TurnDepthBonus))
}

// carried counts what an agent already holds from this server before its
// first call: the tool definitions it was listed and the instructions.
func (a *app) carried(count func(string) int) int {
	tools := a.mcp.ListTools()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Strings(names)
	list := make([]mcp.Tool, 0, len(names))
	for _, n := range names {
		list = append(list, tools[n].Tool)
	}
	b, _ := json.Marshal(list)
	return count(string(b)) + count(instructions(a.cfg))
}

// accounting wraps every tool call: it counts the call for usage, takes
// the model's real usage when the client reports it in _meta, and names
// the agent for the pad's ledger.
func (a *app) accounting(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if ag, err := a.agents.Resolve(ctx); err == nil {
			ag.Budget.CountCall()
			if in, out, ok := reportedUsage(req.Params.Meta); ok {
				ag.Budget.ObserveUsage(in, out)
			}
			ctx = pad.WithAuthor(ctx, ag.ID.Agent)
		} else {
			return mcp.NewToolResultError("scratchpad-mcp: " + err.Error()), nil
		}
		return next(ctx, req)
	}
}

// reportedUsage reads _meta["scratchpad/usage"] = {input_tokens, output_tokens}.
func reportedUsage(m *mcp.Meta) (in, out int, ok bool) {
	if m == nil {
		return 0, 0, false
	}
	u, isMap := m.AdditionalFields[usageMetaKey].(map[string]any)
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
