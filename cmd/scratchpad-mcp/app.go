package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// app is one assembled server: the MCP server, the upstream proxy, the
// agent registry and the usage events. Built by newApp, used by serve,
// doctor and the tests.
type app struct {
	cfg    *config.Config
	log    *slog.Logger
	def    agents.Identity
	server *server.Server
	proxy  *proxy.Proxy     // the one proxy, or nil with pool
	pool   *proxy.Pool      // with PerOwner: each owner's own proxy
	state  state.Store      // what outlives a request: local, or Redis with [cluster]
	web    *oauth.WebLogins // with PerOwner: owners' OAuth logins through the server
	agents *agents.Registry
	events *budget.Events
	// telemetry is the [telemetry] provider; nil (every call a no-op)
	// when nothing is configured. Closed by closeTelemetry.
	telemetry *telemetry.Provider

	debugStats bool // serve GET /debug/stats over HTTP
}

// upstreamStartWait bounds how long initialize and the first tools/list
// wait for upstreams still starting (npx-launched servers take seconds).
const upstreamStartWait = 15 * time.Second

// padCheckWait bounds the start-up PING of a Redis pad backend.
const padCheckWait = 5 * time.Second

// appOptions are what differs between the ways the server is run; the
// zero value suits several clients (HTTP, SSE) and doctor.
type appOptions struct {
	// OneClient means the server has exactly one client (stdio): the
	// upstreams start with its initialize and are told the sampling,
	// elicitation and roots capabilities it declared.
	OneClient bool
	// Start is the context the upstreams run in under OneClient.
	Start context.Context
	// PerOwner gives every bearer token owner its own instances of the
	// upstreams ([proxy.Pool]): HTTP with tokens.
	PerOwner bool
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
	ctx, cancel = context.WithTimeout(context.Background(), padCheckWait)
	if p, err := agents.PadPersistence(ctx, cfg.Pad); err != nil {
		log.Warn("[pad] redis_url: its persistence could not be read", "error", err)
	} else if !p.Durable() {
		log.Warn("[pad] redis_url: "+p.String()+" — every pad, its ledger and history go with a restart; turn on appendonly (see README, Replicas)", "redis", cfg.Pad.RedactedRedisURL())
	} else if p.Known {
		log.Info("[pad] redis_url: "+p.String(), "redis", cfg.Pad.RedactedRedisURL())
	}
	cancel()
	a := &app{cfg: cfg, log: log, def: def, events: budget.NewEvents(cfg.MemoryDir)}
	if a.state, err = state.Open(cfg.Cluster, cfg.MemoryDir); err != nil {
		return nil, fmt.Errorf("%s: %w", configName(cfg), err)
	}
	if a.state.Replicated() {
		// A cluster Redis that cannot be reached fails the start.
		ctx, cancel := context.WithTimeout(context.Background(), padCheckWait)
		err := a.state.Ready(ctx)
		cancel()
		if err != nil {
			a.state.Close()
			return nil, fmt.Errorf("%s: %w", configName(cfg), err)
		}
		// A Redis that keeps nothing over its restart loses budgets, pads
		// and sessions with it: said at every start.
		ctx, cancel = context.WithTimeout(context.Background(), padCheckWait)
		if p, err := a.state.(*state.Redis).Persistence(ctx); err != nil {
			log.Warn("[cluster] redis_url: its persistence could not be read", "error", err)
		} else if !p.Durable() {
			log.Warn("[cluster] redis_url: "+p.String()+" — budgets' charges, live runs, 2025 sessions, stored outputs not cached here, OAuth tokens and the requestState key go with a restart; turn on appendonly (see README, Replicas)", "redis", a.state)
		} else {
			log.Info("[cluster] redis_url: "+p.String(), "redis", a.state)
		}
		cancel()
		// What is shared, once: upstreams stay the replica's own.
		log.Info("[cluster] replica mode: 2025 sessions, their notifications and stream resumptions, stored outputs, budgets, live runs, session, agent and byte bounds, OAuth tokens and owners' OAuth logins through the server are shared; upstreams are each replica's own")
	}
	ctx, cancel = context.WithTimeout(context.Background(), padCheckWait)
	stateKeys, keySource, err := requestStateKeys(ctx, cfg.Cluster, a.state)
	cancel()
	if err != nil {
		a.state.Close()
		return nil, fmt.Errorf("%s: %w", configName(cfg), err)
	}
	log.Info("requestState key", "source", keySource)
	counter := tokens.ForModel(cfg.Agent.Provider, cfg.Agent.Model)
	// Load the encoding while the client initializes: the first count
	// would otherwise pay for it.
	counter.Preload()
	log.Info("tokens", "model", cfg.Agent.Model, "provider", cfg.Agent.Provider, "encoding", counter.Name())

	var cache *explore.Cache
	if cfg.Explore.CacheBytes > 0 {
		cache = explore.NewCache(cfg.Explore.CacheBytes)
	}
	// Before what it is handed to; a failure below closes it, so that no
	// exporter outlives a failed start.
	if a.telemetry, err = openTelemetry(cfg); err != nil {
		return nil, err
	}
	fail := func(err error) (*app, error) {
		_ = a.telemetry.Close(context.Background())
		return nil, err
	}
	red, err := redact.New(cfg.Redaction.Options())
	if err != nil {
		return fail(fmt.Errorf("%s: [redaction]: %w", configName(cfg), err))
	}
	if a.agents, err = agents.NewRegistry(agents.Options{Config: cfg, Logger: log, Default: def, Cache: cache, Events: a.events, State: a.state, Telemetry: a.telemetry, Redactor: red}); err != nil {
		return fail(fmt.Errorf("%s: %w", configName(cfg), err))
	}
	if opts.PerOwner && needsWebLogins(cfg) {
		a.web = oauth.NewWebLogins("") // its URL once the server listens
		a.web.TokenOwner = func(tok string) (string, bool) {
			owner := frontdoor.OwnerOfToken(cfg.HTTP.Tokens, tok)
			return owner, owner != ""
		}
		notify := func(owner, server, id string) {
			if a.server != nil {
				a.server.ElicitationComplete(owner, id)
			}
			// Replicas: this replica's upstream of the owner's server,
			// waiting for the login, reads the token on Redis now.
			if a.web.Clients != nil {
				if c, ok := a.web.Clients(owner, server); ok {
					go func() {
						ctx, cancel := context.WithTimeout(context.Background(), loginDoneTimeout)
						defer cancel()
						c.Recheck(ctx)
					}()
				}
			}
		}
		if a.state.Replicated() {
			notify = relayLoginsDone(a.state, log, notify)
		}
		a.web.OnComplete = func(owner, server, loginURL string) {
			notify(owner, server, proxy.LoginElicitationID(loginURL))
		}
	}
	authorize, err := oauthClients(cfg, log, a.web, a.state)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", configName(cfg), err))
	}
	reservedTools, reservedRes, reservedPrompts := a.agents.Reserved()
	popts := proxy.Options{
		Redact: func(sc *config.Server) *redact.Redactor {
			mode := redact.Mode(cfg.RedactionMode(sc))
			if mode == redact.Off {
				return nil
			}
			return red.With(mode)
		},
		Authorize: authorize,
		Servers:   cfg.Servers, Missing: cfg.Skipped, Logger: log, Version: versionString(),
		ReservedTools: reservedTools, ReservedResources: reservedRes, ReservedPrompts: reservedPrompts,
		StartWait: upstreamStartWait,
		Telemetry: a.telemetry,
		Search:    cfg.Catalogue.Mode == config.CatalogueSearch,
	}
	changed := func(p *proxy.Proxy, k proxy.Kind) {
		if a.server != nil {
			a.server.Changed(p, k)
		}
	}
	if opts.PerOwner {
		a.pool = proxy.NewPool(proxy.PoolOptions{Proxy: popts, OnChange: changed, Idle: cfg.HTTP.UpstreamIdle, Start: opts.Start})
	} else {
		popts.OnChange = func(k proxy.Kind) { changed(a.proxy, k) }
		a.proxy = proxy.New(popts)
	}
	var start context.Context
	if opts.OneClient {
		start = opts.Start
		if start == nil {
			start = context.Background()
		}
	}
	a.server = server.New(server.Options{
		Name: "scratchpad-mcp", Version: versionString(), Instructions: agents.Instructions(cfg.Agent), Logger: log,
		Proxy:          a.proxy,
		State:          a.state,
		Lease:          cfg.Cluster.Lease,
		Session:        a.session,
		InitializeMeta: agents.LimitsMeta(cfg.Agent),
		StartUpstreams: start,
		Identify: func(ctx context.Context, req *proxy.Request, call bool) (context.Context, error) {
			ctx, ag, err := a.agents.Identify(ctx, req.Meta, call)
			if err != nil {
				return ctx, err
			}
			req.Agent = ag.Divert()
			if call {
				// Only a tool call's arguments may hold references.
				req.References = ag.References()
			}
			return ctx, nil
		},
		SessionEnded: a.agents.Finish,
		CallTimeout:  cfg.Explore.CallTimeout,
		Telemetry:    a.telemetry,
		StateKeys:    stateKeys,
	})
	return a, nil
}

// session is what one client session gets: the agents registry's
// session (its identity, fixed now, and what its agent is offered) in the
// server's terms.
func (a *app) session(info server.SessionInfo) (*server.Own, error) {
	s, err := a.agents.Session(info.ID, info.Request)
	if err != nil {
		return nil, err
	}
	var acquire func() (*proxy.Proxy, func())
	if a.pool != nil {
		owner := ""
		if info.Request != nil {
			owner = frontdoor.CallerOf(info.Request.Context()).Owner
		}
		acquire = func() (*proxy.Proxy, func()) { return a.pool.Acquire(owner) }
	}
	return &server.Own{
		Acquire:        acquire,
		Context:        s.Context,
		Tools:          s.Tools,
		Resources:      s.Resources,
		Prompts:        s.Prompts,
		Watch:          s.Watch(),
		Instructions:   s.Instructions,
		InitializeMeta: s.InitializeMeta,
		Listed:         s.Listed,
	}, nil
}

func configName(cfg *config.Config) string {
	if cfg.Path == "" {
		return "defaults"
	}
	return cfg.Path
}
