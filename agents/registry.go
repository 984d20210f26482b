package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/appview"
	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/redisurl"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/reference"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Options configures a [Registry].
type Options struct {
	Config *config.Config
	Logger *slog.Logger
	// Default is the identity of a session whose context carries none
	// (stdio: from the command line).
	Default Identity
	// Cache is shared by every agent's exploration tools; nil disables it.
	Cache *explore.Cache
	// Events receives each finished agent's usage; nil discards it.
	Events *budget.Events
	// State is where what outlives a request is kept (package state):
	// nil means a [state.Local] of this process.
	State state.Store
	// Redactor masks credentials in what the pad and artifact tools write
	// ([redaction] mode; nil or mode off: written as given).
	Redactor *redact.Redactor
	// Telemetry is told each own tool call (see [Registry.charging]) and
	// each call's agent and budget ([Registry.Identify]); nil is off.
	Telemetry *telemetry.Provider
}

// Registry holds the live agents, one per MCP session.
type Registry struct {
	opts Options
	log  *slog.Logger
	seq  atomic.Int64

	mu     sync.Mutex
	agents map[string]*Agent // by session id
	// What retention must keep (see [Registry.Protected]), counted per
	// live agent: pad directories, run directories, files pointed to.
	keepPads    map[string]int
	keepRuns    map[string]int
	keepPointed map[string]int
	// Live agents per stored-outputs folder: agents without a run share
	// one, so a temporary file there may be another live agent's write
	// in flight.
	scratchUsers map[string]int

	finishing sync.WaitGroup // records of finished agents waiting for their counts

	quotas *quotas // [retention] owner_max_bytes

	// The configured servers' names, and the redaction modes of those
	// with one of their own: what an exploration answer over a server's
	// stored output is scanned in ([Registry.answerRedactor]).
	servers     []string
	serverModes map[string]redact.Mode

	live *liveLeases // the leases of runs live here, with a replicated store; nil alone

	// exploring bounds each owner's exploration calls at once, all its
	// agents together ([explore] max_calls_per_owner): one channel per
	// owner, kept for the registry's life (owners are the configured
	// tokens' owners, a few).
	wholeMu    sync.Mutex
	wholeClean map[string]bool // stored files scanned whole (answers.go)

	exploringMu sync.Mutex
	exploring   map[string]chan struct{}

	padMu sync.Mutex
	pads  map[string]*pad.Pad // by location (directory or Redis pad id): agents of a run share one
	redis *pad.Redis          // [pad] backend = "redis": one client for every pad, made on first use

	// The server's own tools, resources and prompts, each resolving the
	// calling session's agent.
	explore   []tool.Def
	artifacts []tool.Def
	pad       []tool.Def
	memory    []tool.Def // the memory tool, once per name (memory.go); nil when no agent has one
	view      []tool.Def // the MCP App view of stored outputs (package appview)
	padRes    []tool.Resource
	padPrompt []tool.Prompt
	watcher   *pad.Watcher // nil without a pad
}

// NewRegistry returns an empty registry with the server's own tools. It
// fails when [pad] cannot be used (its schema file, its sections).
func NewRegistry(opts Options) (*Registry, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.State == nil {
		opts.State = state.NewLocal(state.LocalOptions{MemoryDir: opts.Config.MemoryDir})
	}
	r := &Registry{opts: opts, log: opts.Logger, agents: map[string]*Agent{}, pads: map[string]*pad.Pad{},
		keepPads: map[string]int{}, keepRuns: map[string]int{}, keepPointed: map[string]int{}, scratchUsers: map[string]int{},
		quotas:    &quotas{max: opts.Config.Retention.OwnerMaxBytes, by: map[string]*ownerUse{}},
		exploring: map[string]chan struct{}{}}
	if opts.State.Replicated() {
		r.live = r.newLiveLeases()
	}
	exploreFor := func(ctx context.Context) (*explore.Env, error) {
		ag, err := r.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Explore(), nil
	}
	r.explore = explore.Tools(exploreFor)
	r.view = appview.Tools(exploreFor)
	for i, d := range r.view {
		// The page's answers reach the person, not the model: masked as
		// an exploration answer is, never charged to the budget. The
		// model's view call is charged as any own tool's.
		h := r.scanning(d.Name, d.Handler)
		if d.Name == appview.ToolView {
			h = r.charging(d.Name, false, h)
		}
		r.view[i].Handler = h
	}
	r.artifacts = artifacts.Tools(func(ctx context.Context) (*artifacts.Env, error) {
		ag, err := r.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Artifacts()
	})
	if c := opts.Config.Pad; c.Enabled {
		popts, err := PadOptions(c)
		if err != nil {
			return nil, err
		}
		padFor := func(ctx context.Context) (*pad.Pad, error) {
			ag, err := r.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Pad()
		}
		r.watcher = pad.NewWatcher()
		if r.pad, err = pad.Tools(padFor, popts, r.watcher); err != nil {
			return nil, fmt.Errorf("[pad]: %w", err)
		}
		r.padRes = []tool.Resource{pad.Resource(padFor)}
		r.padPrompt = []tool.Prompt{pad.Prompt(padFor)}
	}
	mem, err := r.memoryTools()
	if err != nil {
		return nil, err
	}
	r.memory = mem
	r.outputModes()
	for k, defs := range [][]tool.Def{r.explore, r.artifacts, r.pad, r.memory} {
		for i := range defs {
			h := r.scrubbing(defs[i].Name, defs[i].Handler)
			if k == 0 {
				h = r.scanning(defs[i].Name, h)
			}
			defs[i].Handler = r.charging(defs[i].Name, k == 0, h)
		}
	}
	return r, nil
}

// charging wraps an own tool's handler so that what its answer costs the
// model is charged to the calling agent's budget: all of it, less what the
// handler charged itself ([tool.Result].Charged: exploration results and
// inline artifacts, checked against the budget before they are given).
// Answers that are errors, pad readings and too-large objects are in the
// model's context as much as any other.
//
// It is also the one place every own tool call passes for telemetry
// ([Options].Telemetry): a span per call (the file it reads, for
// exploring ones), its charge on the span, the token counters (extracted:
// what exploring put in the context) and the server span's tally.
func (r *Registry) charging(name string, exploring bool, h tool.Handler) tool.Handler {
	return func(ctx context.Context, args json.RawMessage) tool.Result {
		tel := r.opts.Telemetry
		var es *telemetry.Span
		if tel.Tracing() {
			_, es = tel.StartExplore(ctx, name, fileArg(args))
		}
		out := h(ctx, args)
		ag, err := r.Resolve(ctx)
		if err == nil {
			n := ag.Counter.CountString(out.Text)
			ag.Budget.Charge(n - out.Charged)
			if tel != nil {
				r.observeOwn(ctx, ag, name, exploring, n, es)
				if out.Refused != "" {
					tel.Refused(ctx, out.Refused, ag.ID.Owner)
				}
			}
		}
		es.End(telemetry.Outcome{IsError: out.IsError})
		return out
	}
}

// observeOwn tells telemetry what an own tool's answer cost: n tokens
// reached the context, all charged.
func (r *Registry) observeOwn(ctx context.Context, ag *Agent, name string, exploring bool, n int, es *telemetry.Span) {
	tel := r.opts.Telemetry
	left := -1
	if ag.Budget.Limited() {
		left = ag.Budget.Remaining()
	}
	es.SetTokens(telemetry.Tokens{Charged: n, BudgetLeft: left})
	u := telemetry.Usage{Tool: name, Owner: ag.ID.Owner, Charged: n}
	if exploring {
		u.Extracted = n
	}
	tel.RecordTokens(ctx, u)
	telemetry.ServerSpan(ctx).Note(telemetry.Tally{Out: n, Charged: n})
}

// fileArg is the "file" argument of an own tool's call, "" without one:
// a span attribute only.
func fileArg(args json.RawMessage) string {
	// Read in one pass without decoding the rest: the arguments were
	// decoded by the handler already (and may hold a long pattern).
	v, ok := jsonscan.Lookup(args, "file")
	if !ok {
		return ""
	}
	return jsonscan.Unquote(v)
}

// Agent is one session's agent. Its fields are fixed when it is created.
type Agent struct {
	ID        Identity
	SessionID string
	Settings  config.Agent // [agent] with the worker's overrides applied
	Counter   *tokens.Counter
	Budget    *budget.Agent

	Layout        layout.Tree // its owner's tree under memory_dir
	ScratchpadDir string      // where its diverted outputs go (absolute)
	ReadRoot      string      // what its exploration tools may read (absolute)
	PadDir        string      // its pad (absolute); "" with [pad] backend = "redis"
	PadID         string      // its pad on Redis (see [PadID]); "" with the file backend
	// MemoryDir and MemoryID are the pad whose storage holds its
	// /memories ([memory] scope; see [Agent.Memory]), as PadDir and PadID.
	MemoryDir, MemoryID string

	root    *os.Root
	explore *explore.Env
	reg     *Registry
	pointed map[string]bool // files its session was pointed to; under reg.mu
}

// Check validates what agents will need before serving: every configured
// agent's model must have a known context window or an explicit one.
func Check(cfg *config.Config) error {
	check := func(who string, a config.Agent) error {
		if a.ContextWindow > 0 || a.Model == "" {
			return nil
		}
		if _, ok := budget.ContextWindowFor(a.Model); !ok {
			return fmt.Errorf("%s: model %q has no known context window; set context_window", who, a.Model)
		}
		return nil
	}
	if err := check("[agent]", cfg.Agent); err != nil {
		return err
	}
	for name := range cfg.Orchestration.Workers {
		if err := check("[orchestration.worker."+name+"]", cfg.AgentFor(name)); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoSession is returned by [Registry.Resolve] for a context that no
// [Session.Context] made: a call outside any client session.
var ErrNoSession = errors.New("agents: no session in the request's context")

// resolvedKey holds, in a call's context, the agent [Registry.Identify]
// resolved: the rest of the call (divert, the pad, exploration) finds it
// there instead of resolving it again.
type resolvedKey struct{}

// Resolve returns the calling session's agent, creating it on first use.
func (r *Registry) Resolve(ctx context.Context) (*Agent, error) {
	if a, ok := ctx.Value(resolvedKey{}).(*Agent); ok && a.reg == r {
		return a, nil
	}
	s, ok := sessionFrom(ctx)
	if !ok {
		return nil, ErrNoSession
	}
	sid, id := s.ID, s.Identity
	r.mu.Lock()
	a := r.agents[sid]
	r.mu.Unlock()
	if a != nil {
		r.observeHeader(ctx, a)
		return a, nil
	}
	a, err := r.create(s)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if prev := r.agents[sid]; prev != nil {
		r.mu.Unlock()
		a.close()
		return prev, nil
	}
	r.agents[sid] = a
	r.keep(a, 1)
	r.mu.Unlock()
	r.syncRun(id.Owner, id.Run)
	r.log.Info("agent started", "agent", id.Agent, "role", id.Role, "run", id.Run, "iteration", id.Iteration, "session", sid,
		"tokens", a.Counter.Name(), "budget", a.Budget.Total(), "carried", a.Budget.Used())
	r.observeHeader(ctx, a)
	return a, nil
}

// observeHeader applies X-Scratchpad-Context-Tokens from this request.
func (r *Registry) observeHeader(ctx context.Context, a *Agent) {
	if n := contextTokensFrom(ctx); n > 0 {
		a.Budget.ObserveUsage(n, 0)
	}
}

// settings is the effective [agent] of an agent: [agent] with its
// worker's overrides.
func (r *Registry) settings(id Identity) config.Agent { return r.opts.Config.AgentFor(id.Agent) }

func (r *Registry) create(s *Session) (*Agent, error) {
	cfg := r.opts.Config
	id, sid := s.Identity, s.ID
	settings := r.settings(id)
	counter := tokens.ForModel(settings.Provider, settings.Model)
	usable, err := budget.Options{Model: settings.Model, ContextWindow: ContextWindow(settings), SafetyMargin: settings.Scratchpad.ContextSafetyMargin}.Usable()
	if err != nil {
		return nil, fmt.Errorf("agent %q: %w", id.Agent, err)
	}
	carried := r.carried(s, counter.CountString)
	a := &Agent{ID: id, SessionID: sid, Settings: settings, Counter: counter, reg: r}
	a.Budget = budget.NewAgent(budget.Identity{
		AgentID:   id.Agent + "-" + strconv.FormatInt(r.seq.Add(1), 10),
		AgentName: id.Agent, Role: id.Role, RunID: id.Run, SessionID: sid, Iteration: id.Iteration, Owner: id.Owner,
	}, usable, carried)
	if r.opts.State.Replicated() {
		// One budget for the agent on every replica: the same session
		// (2025, taken up by another replica) or caller (2026-07-28)
		// names the same counters.
		if err := a.Budget.Share(budget.Shared{Counters: r.opts.State, Key: layout.OwnerSegment(id.Owner) + "budget/" + sid}); err != nil {
			return nil, fmt.Errorf("agent %q: %w", id.Agent, err)
		}
	}

	a.Layout = layout.For(cfg.MemoryDir, id.Owner)
	var rel string
	if id.Run == "" {
		a.ReadRoot = a.Layout.Scratchpad()
		a.ScratchpadDir = a.ReadRoot
	} else {
		a.ReadRoot = a.Layout.Run(id.Run)
		rel = layout.IterationScratchpad(id.Iteration)
		a.ScratchpadDir = a.Layout.RunScratchpad(id.Run, id.Iteration)
	}
	if cfg.Pad.Backend == config.BackendRedis {
		a.PadID = layout.PadID(id.Owner, id.PadRun(cfg.Pad.Scope), id.Agent)
	} else {
		a.PadDir = a.Layout.Pad(id.PadRun(cfg.Pad.Scope), id.Agent)
	}
	a.MemoryDir, a.MemoryID = a.memoryPad()
	// Both through memory_dir's root: a link planted on the way to them
	// that leads out of memory_dir refuses the agent (memdir.ErrOutside).
	out, err := memdir.In(cfg.MemoryDir, a.ScratchpadDir)
	if err == nil {
		err = out.Make()
	}
	if err != nil {
		return nil, fmt.Errorf("agent %q: create scratchpad dir: %w", id.Agent, err)
	}
	// A crash's leftovers are removed by the first agent of a folder
	// only: with one live already, a temporary file there may be its
	// divert being written (a flood of sessions removed them mid-write).
	r.mu.Lock()
	first := r.scratchUsers[a.ScratchpadDir] == 0
	r.mu.Unlock()
	if first {
		if err := divert.CleanTemp(out); err != nil {
			r.log.Warn("cleaning temporary files failed", "dir", a.ScratchpadDir, "error", err)
		}
	}
	readRoot, err := memdir.In(cfg.MemoryDir, a.ReadRoot)
	if err == nil {
		a.root, err = readRoot.OpenRoot()
	}
	if err != nil {
		return nil, fmt.Errorf("agent %q: open read root: %w", id.Agent, err)
	}
	a.explore = &explore.Env{
		Root:                a.root,
		Dir:                 rel,
		Count:               counter.CountString,
		MaxExtractionTokens: settings.Scratchpad.MaxExtractionTokens,
		Budget:              a.Budget,
		Cache:               r.opts.Cache,
		Slots:               make(chan struct{}, explore.DefaultConcurrency),
		OwnerSlots:          r.ownerSlots(id.Owner),
	}
	if st := r.opts.State; st.Replicated() {
		// Stored outputs another replica wrote are fetched into the
		// local cache at the path they would have here.
		base, err := filepath.Rel(cfg.MemoryDir, a.ReadRoot)
		if err != nil {
			return nil, fmt.Errorf("agent %q: read root: %w", id.Agent, err)
		}
		a.explore.Fetch = func(rel string) error {
			return st.FetchBlob(context.Background(), path.Join(filepath.ToSlash(base), rel))
		}
		a.explore.FetchAll = func(ctx context.Context, limit int) error {
			names, err := st.ListBlobs(ctx, filepath.ToSlash(base), limit)
			if err != nil {
				return err
			}
			for _, n := range names {
				// One gone meanwhile (expired, swept) is not searched.
				if err := st.FetchBlob(ctx, n); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
			}
			return nil
		}
	}
	return a, nil
}

// ownerSlots is owner's bound of exploration calls at once, shared by its
// agents.
func (r *Registry) ownerSlots(owner string) chan struct{} {
	r.exploringMu.Lock()
	defer r.exploringMu.Unlock()
	ch := r.exploring[owner]
	if ch == nil {
		n := r.opts.Config.Explore.MaxCallsPerOwner
		if n <= 0 {
			n = explore.DefaultOwnerConcurrency
		}
		ch = make(chan struct{}, n)
		r.exploring[owner] = ch
	}
	return ch
}

// Exploring is the exploration calls owner's agents are running now
// ("" without tokens: every agent's).
func (r *Registry) Exploring(owner string) int {
	r.exploringMu.Lock()
	defer r.exploringMu.Unlock()
	return len(r.exploring[owner])
}

func (a *Agent) close() {
	if a.root != nil {
		_ = a.root.Close()
	}
}

// Explore is the agent's environment for the exploration tools.
func (a *Agent) Explore() *explore.Env { return a.explore }

// Divert is the agent's interception settings.
func (a *Agent) Divert() *divert.Agent {
	d := &divert.Agent{
		Enabled:    a.Settings.Scratchpad.Enabled,
		Dir:        a.ScratchpadDir,
		Top:        a.reg.opts.Config.MemoryDir,
		Counter:    a.Counter,
		Account:    account{a},
		Structured: a.Settings.Scratchpad.ResultView == config.ViewStructured,
	}
	if st := a.reg.opts.State; st.Replicated() {
		d.Blobs = sharedQuota{st: st, owner: a.ID.Owner, max: a.reg.opts.Config.Retention.OwnerMaxBytes}
		d.BlobTTL = a.reg.opts.Config.Retention.MaxAge // 0: kept, as the files are
	}
	return d
}

// References is the agent's environment for references to its stored
// outputs in its tool calls' arguments (package reference): its read
// root and stored-outputs folder as its exploration tools have them,
// [explore] max_reference_bytes, credentials masked on the way out
// unless [redaction] mode = "off" (a server's secrets_by_reference keeps
// them for that server: the proxy says so per call), and what the
// references put in counted in its usage, never charged.
func (a *Agent) References() *reference.Env {
	env := &reference.Env{
		Explore:  a.explore,
		MaxBytes: a.reg.opts.Config.Explore.MaxReferenceBytes,
		OnResolved: func(r reference.Resolved) {
			a.Budget.AddByReference(r.Tokens)
			a.Budget.AddMasked(r.Masked)
		},
	}
	if red := a.reg.opts.Redactor; red != nil && a.reg.opts.Config.Redaction.Mode != config.RedactOff {
		env.Redactor = red.With(redact.Mask)
	}
	return env
}

// Artifacts is the agent's environment for the artifact tools. With
// [pad] backend = "redis" a run's artifacts live on that Redis, per owner
// and run ([layout.ArtifactsKey]), so agents of a run on several hosts
// share them.
func (a *Agent) Artifacts() (*artifacts.Env, error) {
	env := &artifacts.Env{
		RunID:               a.ID.Run,
		Role:                a.ID.Role,
		Budget:              a.Budget,
		Count:               a.Counter.CountString,
		MaxExtractionTokens: a.Settings.Scratchpad.MaxExtractionTokens,
		OpenRun: func(run string) (*artifacts.Store, error) { // other runs: this owner's only
			return a.reg.openArtifacts(a.Layout, Identity{Run: run, Owner: a.ID.Owner})
		},
	}
	if a.ID.Run != "" {
		st, err := a.reg.openArtifacts(a.Layout, a.ID)
		if err != nil {
			return nil, err
		}
		env.Store = st
	}
	return env, nil
}

// openArtifacts opens the artifacts of run id.Run of id.Owner: a folder of
// the layout, or a hash on the pad's Redis (with this host's folder as
// the cache of large ones).
func (r *Registry) openArtifacts(l layout.Tree, id Identity) (*artifacts.Store, error) {
	if _, err := (Identity{Run: id.Run, Owner: id.Owner}).Normalize(); err != nil || id.Run == "" {
		return nil, fmt.Errorf("%w: run %q", artifacts.ErrInvalidRunID, id.Run)
	}
	cfg := r.opts.Config
	dir, err := memdir.In(cfg.MemoryDir, l.Artifacts(id.Run))
	if err != nil {
		return nil, err
	}
	if cfg.Pad.Backend != config.BackendRedis {
		return artifacts.Open(dir)
	}
	rd, err := r.padRedis()
	if err != nil {
		return nil, err
	}
	st, err := artifacts.OpenRedis(rd.Client(), layout.ArtifactsKey(rd.Prefix(), id.Owner, id.Run), dir)
	if err != nil {
		return nil, err
	}
	st.ExpireAfter(cfg.Pad.RedisTTL) // an idle run's artifacts go with its pad
	return st, nil
}

// padRedis is the registry's one client for the pad's Redis.
func (r *Registry) padRedis() (*pad.Redis, error) {
	r.padMu.Lock()
	defer r.padMu.Unlock()
	return r.padRedisLocked()
}

func (r *Registry) padRedisLocked() (*pad.Redis, error) {
	if r.redis == nil {
		rd, err := PadRedis(r.opts.Config.Pad)
		if err != nil {
			return nil, err
		}
		r.redis = rd
	}
	return r.redis, nil
}

// Pad returns the agent's pad, opened once per location (a directory, or
// a pad id on Redis) and shared by the agents of a run.
func (a *Agent) Pad() (*pad.Pad, error) { return a.padAt(a.PadDir, a.PadID) }

// padAt is the pad in the folder dir, or with id on Redis, opened once.
func (a *Agent) padAt(dir, id string) (*pad.Pad, error) {
	r := a.reg
	r.padMu.Lock()
	defer r.padMu.Unlock()
	key := dir
	if id != "" {
		key = "redis " + id // never a directory: those are absolute
	}
	if p := r.pads[key]; p != nil {
		return p, nil
	}
	opts, err := PadOptions(r.opts.Config.Pad)
	if err != nil {
		return nil, err
	}
	opts.Count = a.Counter.CountString
	var p *pad.Pad
	if id != "" {
		var rd *pad.Redis
		if rd, err = r.padRedisLocked(); err != nil {
			return nil, err
		}
		p, err = rd.Open(id, opts)
	} else {
		var d memdir.Dir
		if d, err = memdir.In(r.opts.Config.MemoryDir, dir); err == nil {
			p, err = pad.OpenIn(d, opts)
		}
	}
	if err != nil {
		return nil, err
	}
	r.pads[key] = p
	return p, nil
}

// PadRedis returns a client for [pad] redis_url; it does no I/O.
func PadRedis(c config.Pad) (*pad.Redis, error) {
	r, err := pad.NewRedis(pad.RedisOptions{URL: c.RedisURL, Prefix: c.RedisPrefix, TTL: c.RedisTTL})
	if err != nil {
		return nil, fmt.Errorf("[pad] redis_url: %w", err)
	}
	return r, nil
}

// CheckPad checks, before serving, that the pad's backend can be reached:
// with backend "redis", that the server answers PING within ctx. Its error
// names the config key and never the password.
func CheckPad(ctx context.Context, c config.Pad) error {
	if !c.Enabled || c.Backend != config.BackendRedis {
		return nil
	}
	r, err := PadRedis(c)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Ping(ctx); err != nil {
		// Ping's error names the server too: keep only the cause.
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return fmt.Errorf("[pad] redis_url: cannot reach %s: %w", r, err)
	}
	return nil
}

// PadPersistence is what the pad's Redis keeps over its restart
// ([redisurl.CheckPersistence]); the zero value without a Redis pad.
func PadPersistence(ctx context.Context, c config.Pad) (redisurl.Persistence, error) {
	if !c.Enabled || c.Backend != config.BackendRedis {
		return redisurl.Persistence{}, nil
	}
	r, err := PadRedis(c)
	if err != nil {
		return redisurl.Persistence{}, err
	}
	defer r.Close()
	p, err := redisurl.CheckPersistence(ctx, r.Client())
	if err != nil {
		return p, fmt.Errorf("[pad] redis_url: %s: %w", r, err)
	}
	return p, nil
}

// PadOptions maps [pad] to pad.Options, reading the schema file.
func PadOptions(c config.Pad) (pad.Options, error) {
	o := pad.Options{Render: c.Render, MaxTokens: c.MaxTokens, EntryTTL: c.EntryTTL, History: c.History, Format: c.Format,
		DefaultTTL: c.DefaultTTL, Header: c.Header, ReadOnly: c.ReadOnly, Template: c.Template}
	for _, s := range c.Sections {
		o.Sections = append(o.Sections, pad.Section{Name: s.Name, Cap: s.Cap, Purpose: s.Purpose, Numbered: s.Numbered})
	}
	if c.Schema != "" {
		b, err := os.ReadFile(c.Schema)
		if err != nil {
			return o, fmt.Errorf("[pad] schema: %w", err)
		}
		o.Schema = b
	}
	return o, nil
}

// settleWait bounds how long the end of an agent waits for its
// background token counts: a count runs at tens of MB per second, so this
// is far more than a real output needs.
const settleWait = 30 * time.Second

// Finish ends the session's agent: its usage event is emitted (if it did
// anything) and its read root closed. Unknown sessions are ignored.
func (r *Registry) Finish(sessionID string) {
	r.mu.Lock()
	a := r.agents[sessionID]
	delete(r.agents, sessionID)
	if a != nil {
		r.keep(a, -1)
	}
	r.mu.Unlock()
	if a == nil {
		return
	}
	r.syncRun(a.ID.Owner, a.ID.Run)
	if a.Budget.Settled() {
		r.finish(a)
		return
	}
	// Its counts are still running: the session's end (a DELETE, stdin's
	// EOF) does not wait for them, its record does ([Registry.FinishAll]
	// waits for such records at shutdown).
	r.finishing.Add(1)
	go func() {
		defer r.finishing.Done()
		r.finish(a)
	}()
}

func (r *Registry) finish(a *Agent) {
	// Counts still running (a large output counted after its pointer was
	// sent) are waited for, so that the record is exact.
	if !a.Budget.Settle(settleWait) {
		r.log.Warn("token counts still running at the end of a session; its usage record may be short", "agent", a.ID.Agent, "session", a.SessionID, "waited", settleWait)
	}
	if r.opts.Events != nil && r.firstOut(a) {
		if err := r.opts.Events.Finish(a.Budget); err != nil {
			r.log.Error("writing usage event failed", "agent", a.ID.Agent, "error", err)
		}
	}
	a.close()
}

// firstOut reports whether a's usage record is this process's to write:
// always alone; with replicas, for the first replica whose copy of the
// agent ends (its counts are the shared ones), once.
func (r *Registry) firstOut(a *Agent) bool {
	if !r.opts.State.Replicated() {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	first, err := r.opts.State.Once(ctx, layout.OwnerSegment(a.ID.Owner)+"usage/"+a.SessionID, usageOnce)
	if err != nil {
		r.log.Warn("the shared store cannot say whether another replica wrote this agent's usage record; writing it", "agent", a.ID.Agent, "error", err)
		return true
	}
	return first
}

// usageOnce is how long a written usage record keeps other replicas from
// writing the same agent's.
const usageOnce = 24 * time.Hour

// FinishAll ends every agent (server shutdown).
func (r *Registry) FinishAll() {
	r.mu.Lock()
	all := r.agents
	r.agents = map[string]*Agent{}
	for _, a := range all {
		r.keep(a, -1)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range all {
		wg.Go(func() { r.finish(a) })
	}
	if r.live != nil {
		// The server is going: its runs' leases are released, not left
		// to expire, and no longer renewed.
		r.live.close()
		for _, a := range all {
			r.syncRun(a.ID.Owner, a.ID.Run)
		}
	}
	wg.Wait()
	r.finishing.Wait()
}

// Len reports the live agents.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.agents)
}

// keep adds (d = 1) or drops (d = -1) what a live agent protects from
// retention. The caller holds r.mu.
func (r *Registry) keep(a *Agent, d int) {
	count := func(m map[string]int, k string) {
		if k == "" {
			return
		}
		if m[k] += d; m[k] <= 0 {
			delete(m, k)
		}
	}
	count(r.keepPads, a.PadDir)
	count(r.keepPads, a.MemoryDir) // "" without the memory tool
	count(r.scratchUsers, a.ScratchpadDir)
	if a.ID.Run != "" {
		// The path a sweep names the run by (layout.Classify): the run
		// of this agent's owner, not a run of that name elsewhere.
		count(r.keepRuns, a.Layout.Run(a.ID.Run))
	}
	for p := range a.pointed {
		count(r.keepPointed, p)
	}
	if d < 0 {
		a.pointed = nil
	}
}

// point records that the agent's session was pointed to the file at path.
func (a *Agent) point(path string) {
	r := a.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.agents[a.SessionID] != a || a.pointed[path] {
		return // finished, or already counted
	}
	if a.pointed == nil {
		a.pointed = map[string]bool{}
	}
	a.pointed[path] = true
	r.keepPointed[path]++
}

// Protected tells retention whether the file at path (absolute) must stay:
// it is in a live agent's pad directory, in the artifacts of a run with a
// live agent (here, or on another replica: [Registry.LiveRun]), or a live
// session was pointed to it. Part of retention.Guard.
func (r *Registry) Protected(path string) bool {
	r.mu.Lock()
	if r.keepPointed[path] > 0 {
		r.mu.Unlock()
		return true
	}
	var runs []string // the runs whose artifacts path may be in
	for d := filepath.Dir(path); ; {
		if r.keepPads[d] > 0 {
			r.mu.Unlock()
			return true
		}
		if filepath.Base(d) == layout.ArtifactsDir {
			runs = append(runs, filepath.Dir(d))
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	r.mu.Unlock()
	for _, run := range runs {
		if r.LiveRun(run) {
			return true
		}
	}
	return false
}

// LiveRun tells retention whether the run directory dir (absolute) has a
// live agent: here, or, with a replicated store, on any replica (its
// lease, [Registry.syncRun]). Part of retention.Guard.
func (r *Registry) LiveRun(dir string) bool {
	dir = filepath.Clean(dir)
	r.mu.Lock()
	live := r.keepRuns[dir] > 0
	r.mu.Unlock()
	return live || r.liveShared(dir)
}
