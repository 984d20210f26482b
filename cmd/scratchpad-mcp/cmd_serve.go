package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	runtimepprof "runtime/pprof"
	"syscall"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

func init() {
	commands["serve"] = command{summary: "serve MCP on stdio (default), streamable HTTP or SSE", example: "scratchpad-mcp serve --config scratchpad.toml                       # stdio, as a desktop client spawns it\nscratchpad-mcp serve --config scratchpad.toml --transport http    # streamable HTTP on 127.0.0.1:8931/mcp", run: runServe}
}

// serveFlags are the flags shared by serve and the commands that build
// the same server (doctor).
type serveFlags struct {
	config, transport, addr string
	agent, role, run        string
	iteration               int
	logLevel, logFormat     string
	sessionTTL              time.Duration
	debugStats              bool
	cpuProfile              string
	memoryDir               string
}

func (f *serveFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.config, "config", "", "config file (TOML); empty: embedded defaults")
	fs.StringVar(&f.transport, "transport", "stdio", "stdio, http (streamable HTTP at /mcp) or sse (/sse + /message)")
	fs.StringVar(&f.addr, "addr", "", "listen address for http/sse (default [http] addr, 127.0.0.1:8931)")
	fs.StringVar(&f.agent, "agent", "main", "agent name over stdio")
	fs.StringVar(&f.role, "role", agents.RoleWorker, "agent role over stdio: coordinator or worker")
	fs.StringVar(&f.run, "run", "", "run id over stdio (orchestration mode)")
	fs.IntVar(&f.iteration, "iteration", 0, "iteration number within the run, over stdio")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "text or json")
	fs.DurationVar(&f.sessionTTL, "session-ttl", 30*time.Minute, "HTTP sessions, and 2026-07-28 callers' agents, idle this long are ended (their usage is recorded)")
	fs.BoolVar(&f.debugStats, "debug-stats", false, "http/sse: serve GET /debug/stats (goroutines, heap, live agents) for soak tests")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	fs.StringVar(&f.memoryDir, "memory-dir", "", "memory_dir for this run, over the config's (an MCP Bundle's memory folder)")
}

// loadConfig loads the config at path (embedded defaults for ""). A
// server whose table needs an environment variable that is not set is
// left out and listed in [config.Config].Skipped: one missing secret
// must not take every other server's tools away (a desktop client shows
// none of them when the process exits). serve warns of each, doctor
// reports each, and a call to a tool it cannot find names them.
func loadConfig(path string) (*config.Config, error) {
	if path == "" {
		return config.Default(), nil
	}
	return config.LoadWith(path, &config.Options{SkipServersWithUnsetEnv: true})
}

func runServe(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f serveFlags
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	log, err := newLogger(stderr, f.logLevel, f.logFormat)
	if err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 2
	}
	if err := notUnderItself(); err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 1
	}
	cfg, err := loadConfig(givenPath(f.config))
	if err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 1
	}
	if dir, err := memoryDirFlag(f.memoryDir); err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 2
	} else if dir != "" {
		cfg.MemoryDir = dir // before anything reads it
	}
	for _, sk := range cfg.Skipped {
		log.Warn("server left out; the others serve", "server", sk.Name, "why", proxy.MissingText(sk))
	}
	for _, d := range cfg.Deprecated {
		log.Warn("config: " + d)
	}
	def := agents.Identity{Agent: f.agent, Role: f.role, Run: f.run, Iteration: f.iteration}
	if _, err := def.Normalize(); err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 2
	}
	if f.cpuProfile != "" {
		// Over stdio too, where there is no /debug/pprof: what the wire
		// benchmark profiles the proxy with.
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "scratchpad-mcp:", err)
			return 1
		}
		defer stopProfile()
	}
	// SIGINT and SIGTERM end serving; the log says which came.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case sig := <-sigs:
			log.Info("shutting down", "signal", sig.String())
			stop()
		case <-ctx.Done():
		}
	}()
	a, err := newApp(cfg, log, def, appOptions{OneClient: f.transport == "stdio", Start: ctx, PerOwner: f.transport != "stdio" && len(cfg.HTTP.Tokens) > 0})
	if err != nil {
		fmt.Fprintln(stderr, "scratchpad-mcp:", err)
		return 1
	}
	defer closeTelemetry(a.telemetry, log) // last: after the agents' final calls
	// [telemetry] metrics_addr: taken now; one that is taken (another
	// instance of this config) only loses the metrics.
	if metricsLn := listenMetrics(cfg, a.telemetry, log); metricsLn != nil {
		metricsCtx, stopMetrics := context.WithCancel(ctx)
		defer stopMetrics()
		go serveMetrics(metricsCtx, metricsLn, a.telemetry, log)
	}
	// Over HTTP the address is taken before anything starts: a port in
	// use ends the command here, with no upstream started and no sweep.
	var ln net.Listener
	switch f.transport {
	case "stdio":
	case "http", "sse":
		addr := f.addr
		if addr == "" {
			addr = cfg.HTTP.Addr
		}
		if ln, err = a.listen(addr); err != nil {
			fmt.Fprintln(stderr, "scratchpad-mcp:", err)
			return 1
		}
		if a.web != nil {
			setRedirect(cfg, a.web, ln, log)
		}
	default:
		fmt.Fprintf(stderr, "scratchpad-mcp: --transport %q: want stdio, http or sse\n", f.transport)
		return 2
	}
	switch {
	case a.pool != nil:
		// Each owner's upstreams start with its first session.
		defer a.pool.Close()
	case f.transport != "stdio":
		// Over stdio they start with the client's initialize.
		a.proxy.Start(ctx, nil)
		fallthrough
	default:
		defer a.proxy.Close()
	}
	defer a.state.Close() // after the agents' usage records
	defer a.agents.FinishAll()
	// Retention: a sweep now (in the background: serving starts at once)
	// and every [retention] interval; ended with the server.
	sweepCtx, stopSweeps := context.WithCancel(ctx)
	waitSweeps := a.sweeper(sweepCtx)
	defer waitSweeps()
	defer stopSweeps()

	if ln == nil {
		err = a.serveStdio(ctx, stdin, stdout)
	} else {
		a.debugStats = f.debugStats
		err = a.serveListener(ctx, f.transport, ln, f.sessionTTL)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		log.Error("serve", "error", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

// notUnderItself refuses to serve as an upstream of scratchpad-mcp (see
// [upstream.DepthEnv]): the config that did it mounts scratchpad-mcp
// behind itself.
func notUnderItself() error {
	if d := upstream.Depth(); d > 0 {
		return fmt.Errorf("started as an upstream of scratchpad-mcp (%s=%d): a [mcp.servers] entry of the config runs scratchpad-mcp itself, which would start itself again without end; remove that entry (scratchpad-mcp init leaves such entries out)", upstream.DepthEnv, d)
	}
	return nil
}

// startCPUProfile profiles the process into path until the returned
// function runs.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := runtimepprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		runtimepprof.StopCPUProfile()
		f.Close()
	}, nil
}

func (a *app) serveStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	err := a.server.ServeStdio(ctx, stdin, stdout)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// listen takes addr for serving, if the configuration allows binding it.
// Its error is net's own ("listen tcp 127.0.0.1:8931: bind: address
// already in use"), which names the address once.
func (a *app) listen(addr string) (net.Listener, error) {
	if err := checkBind(addr, len(a.cfg.HTTP.Tokens) > 0); err != nil {
		return nil, err
	}
	return net.Listen("tcp", addr)
}

// serveListener serves MCP over HTTP (kind "http" or "sse") on ln until
// ctx ends. It only wires: the checks every request passes are the
// server's front door ([frontdoor.FrontDoor]), given the configuration's
// tokens and origins and the agents' identity parsing ([identify]).
func (a *app) serveListener(ctx context.Context, kind string, ln net.Listener, ttl time.Duration) error {
	mux := http.NewServeMux()
	switch kind {
	case "http":
		mux.Handle("/mcp", a.server.StreamableHTTP(server.StreamableHTTPOptions{
			SessionTimeout: ttl,
			// Resumable streams (Last-Event-ID), bounded.
			StoreBytes:          eventStoreBytes,
			MaxSessions:         a.cfg.HTTP.MaxSessions,
			MaxSessionsPerOwner: a.cfg.HTTP.MaxSessionsPerOwner,
		}))
	case "sse":
		// go-sdk's endpoint event names the stream's own URL with the
		// session; /message stays for clients that post there.
		h := a.server.SSE()
		mux.Handle("/sse", h)
		mux.Handle("/message", h)
	}
	if a.telemetry != nil {
		// Always (the provider keeps the recent calls even without
		// [telemetry]); behind the front door like /mcp.
		dash := a.dashboardHandler()
		mux.Handle("/dashboard", dash)
		mux.Handle("/dashboard/", dash)
	}
	// An owner's stream carries its own agents' records only.
	mux.Handle("/events", a.events.Handler(func(r *http.Request) string { return frontdoor.CallerOf(r.Context()).Owner }))
	switch {
	case a.debugStats && len(a.cfg.HTTP.Tokens) > 0:
		// Its figures and profiles are the whole process's, every
		// owner's at once: not for any one owner to read.
		a.log.Warn("--debug-stats is off with bearer tokens: /debug/* would show every owner's activity to each")
	case a.debugStats:
		mux.HandleFunc("/debug/stats", a.serveStats)
		mux.HandleFunc("/debug/pprof/", pprof.Index) // heap, goroutine, …
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	}
	a.log.Info("serving", "transport", kind, "addr", ln.Addr().String())
	// The front door checks Host, bearer token, Origin and identity
	// headers, and bounds the body's arrival.
	fd := frontdoor.FrontDoorOptions{
		Tokens: a.cfg.HTTP.Tokens, AllowedOrigins: a.cfg.HTTP.AllowedOrigins,
		BodyTimeout: bodyTimeout, Identify: identify, Log: a.log,
		Probes: a.server.Probes(a.ready), Telemetry: a.telemetry,
	}
	if a.web != nil {
		fd.WebLogins = a.web
	}
	// The Server Card: public, so nothing of any owner's (card.go).
	fd.Card, fd.CardPaths = server.ServerCard(a.cardOptions(kind)), []string{server.CardPath, server.CardWellKnownPath}
	if a.cfg.HTTP.TokensFile != "" && len(a.cfg.HTTP.Tokens) > 0 {
		// token add / token revoke take effect without a restart.
		ts := config.NewTokenSet(a.cfg, a.log)
		ts.Revoked = a.server.EndOwner // and a revoked owner's open sessions end
		fd.TokensNow = ts.Tokens
		go ts.Watch(ctx) // within a second, requests or not
	}
	handler := frontdoor.FrontDoor(fd, mux)
	// With tokens, connections no request has proven with a valid token
	// hold a bounded share of max_connections: a flood of silent sockets
	// cannot lock owners out (the front door proves a connection).
	limited := frontdoor.LimitConnections(ln, frontdoor.ConnLimit{Max: a.cfg.HTTP.MaxConnections, Proving: len(a.cfg.HTTP.Tokens) > 0}, a.log)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idleTimeout, ConnContext: limited.ConnContext}
	go func() {
		<-ctx.Done()
		// Drain: no new work (503, /readyz not ready), the calls in
		// flight finish within drainWait; then the sessions' calls left
		// stop and their streams end; then record every agent's usage
		// while /events subscribers still listen, and end their
		// streams, so Shutdown need not wait.
		dctx, cancel := context.WithTimeout(context.Background(), drainWait)
		if !a.server.Drain(dctx) {
			a.log.Warn("calls still in flight at the end of the drain; they are cancelled", "waited", drainWait)
		}
		cancel()
		a.server.Shutdown()
		a.agents.FinishAll()
		a.events.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkBind refuses a non-loopback address unless bearer tokens are
// configured: an unauthenticated MCP server on a network is an open door.
func checkBind(addr string, auth bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if frontdoor.IsLoopbackHost(host) || auth {
		return nil
	}
	return fmt.Errorf("--addr %q is not a loopback address: configure [[http.tokens]] to serve beyond this machine", addr)
}

// eventStoreBytes bounds what the HTTP sessions keep, together, for
// redelivery to a client that reconnects with Last-Event-ID.
const eventStoreBytes = 64 << 20

// bodyTimeout bounds the reading of one request body
// ([frontdoor.FrontDoorOptions].BodyTimeout).
var bodyTimeout = frontdoor.DefaultBodyTimeout // a variable for tests

// drainWait bounds how long a stopping server waits for the calls in
// flight (a variable for tests).
var drainWait = 30 * time.Second

// ready is /readyz's check: a Redis pad reachable, the upstreams done
// starting (an owner's start with its first session).
func (a *app) ready(ctx context.Context) error {
	if err := a.state.Ready(ctx); err != nil {
		return errors.New("the cluster's Redis is not reachable ([cluster] redis_url)")
	}
	if err := agents.CheckPad(ctx, a.cfg.Pad); err != nil {
		return errors.New("the pad's Redis is not reachable ([pad] redis_url)")
	}
	if a.proxy != nil && a.proxy.Starting() {
		return errors.New("upstreams still starting")
	}
	return nil
}

// idleTimeout closes keep-alive connections with no request in flight.
const idleTimeout = 2 * time.Minute

// identify puts in a request's context the agent identity its headers
// name ([frontdoor.FrontDoorOptions].Identify).
func identify(r *http.Request, owner string) (context.Context, error) {
	id, err := agents.FromRequest(r, owner)
	if err != nil {
		return nil, err
	}
	norm, err := id.Normalize()
	if err != nil {
		return nil, err
	}
	// A 2026-07-28 request has no session: the agent it names is found
	// again from request to request by this key.
	c := frontdoor.CallerOf(r.Context())
	c.Agent = norm.Key()
	return agents.WithRequestIdentity(frontdoor.WithCaller(r.Context(), c), id), nil
}

// serveStats answers GET /debug/stats (--debug-stats): what a soak test
// watches for growth. /debug/pprof/ is served with it.
func (a *app) serveStats(w http.ResponseWriter, r *http.Request) {
	// Live heap: collect first, or garbage not yet swept counts too.
	// ?release=1 also returns freed memory to the system, so that the
	// process's RSS read next shows what is held, not what the
	// scavenger has yet to give back.
	if r.URL.Query().Has("release") {
		debug.FreeOSMemory()
	} else {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"goroutines": runtime.NumGoroutine(),
		"heap_alloc": m.HeapAlloc,
		"sys":        m.Sys,
		"agents":     a.agents.Len(),
	})
}

// cardName is the server's registry name (server.json's).
const cardName = "io.github.scratchpad-mcp/scratchpad-mcp"

// cardOptions describe this server for its Server Card: identity, where
// it listens (public_url, else the request's checked Host), whether a
// bearer token is required, and the own tools every agent gets (a worker
// named main: a coordinator's write_artifact is left out).
func (a *app) cardOptions(kind string) server.CardOptions {
	var tools []server.CardTool
	for _, d := range a.agents.OwnTools(agents.Identity{Agent: "main", Role: agents.RoleWorker}) {
		tools = append(tools, server.CardTool{Name: d.Name, Title: d.Title, Summary: server.FirstSentence(d.Description)})
	}
	return server.CardOptions{
		Name: cardName, Title: "scratchpad-mcp", Version: versionString(),
		Description:   "Proxy for MCP servers: big results go to disk, the model explores them with capped tools.",
		RepositoryURL: "https://github.com/scratchpad-mcp/scratchpad-mcp",
		PublicURL:     a.cfg.HTTP.PublicURL, Transport: kind,
		BearerToken: len(a.cfg.HTTP.Tokens) > 0 || a.cfg.HTTP.TokensFile != "",
		Tools:       tools,
	}
}
