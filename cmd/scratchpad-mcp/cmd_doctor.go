package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/retention"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

func init() {
	commands["doctor"] = command{summary: "check a config: load it, start each upstream, list tools and thresholds, check memory_dir", example: "scratchpad-mcp doctor --config scratchpad.toml", run: runDoctor}
}

func runDoctor(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfgPath, logLevel string
	var wait time.Duration
	fs.StringVar(&cfgPath, "config", "", "config file (TOML); empty: embedded defaults")
	var bare bool
	fs.DurationVar(&wait, "timeout", doctorWait, "how long to wait for each upstream to start (default: 30s, 2m for one a package runner such as npx or uvx starts, which may download it first)")
	fs.StringVar(&logLevel, "log-level", "", "show the server's logs on stderr at this level (debug, info, warn, error); default: none")
	fs.BoolVar(&bare, "bare", false, "also start each ready server a second time, as a client that declares no sampling, elicitation or roots, to name the tools it lists only to clients that do")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	timeoutSet := false
	fs.Visit(func(f *flag.Flag) { timeoutSet = timeoutSet || f.Name == "timeout" })
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp doctor: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	log := slog.New(slog.DiscardHandler)
	if logLevel != "" {
		l, err := newLogger(stderr, logLevel, "text")
		if err != nil {
			fmt.Fprintln(stderr, "scratchpad-mcp doctor:", err)
			return 2
		}
		log = l
	}
	d := &doctor{out: stdout, progress: stderr, log: log, wait: wait, waitSet: timeoutSet, bare: bare}
	d.run(cfgPath)
	if len(d.problems) == 0 {
		fmt.Fprintln(stdout, "\nno problems found")
		return 0
	}
	fmt.Fprintf(stdout, "\n%d problem(s):\n", len(d.problems))
	for _, p := range d.problems {
		fmt.Fprintln(stdout, "problem:", p)
	}
	return 1
}

// doctor collects problems; each becomes one "problem:" line.
type doctor struct {
	out      io.Writer
	progress io.Writer // where waiting is said as it goes (stderr)
	log      *slog.Logger
	wait     time.Duration
	waitSet  bool // --timeout given: it bounds every server, npx's too
	bare     bool // --bare: a second instance of each, told no capabilities
	problems []string
}

func (d *doctor) problem(format string, args ...any) {
	d.problems = append(d.problems, fmt.Sprintf(format, args...))
}

func (d *doctor) run(cfgPath string) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		// One line per config error, as the loader reports them all.
		var es config.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				d.problem("config: %v", e)
			}
		} else {
			d.problem("config: %v", err)
		}
		return
	}
	fmt.Fprintf(d.out, "config: %s: ok, %d upstream server(s)\n", configName(cfg), len(cfg.Servers)+len(cfg.Skipped))
	if !cfg.Agent.Scratchpad.Enabled {
		fmt.Fprintln(d.out, "note: [agent.scratchpad] enabled = false: no output will be intercepted")
	}
	for _, dep := range cfg.Deprecated {
		fmt.Fprintf(d.out, "WARNING: %s\n", dep)
	}
	d.checkMemoryDir(cfg.MemoryDir)
	d.reportRetention(cfg)
	d.checkPersistence(cfg)
	if !d.checkPad(cfg) {
		// Reported once; check the upstreams without the pad, which newApp
		// would refuse again.
		c := *cfg
		c.Pad.Enabled = false
		cfg = &c
	}

	a, err := newApp(cfg, d.log, agents.Identity{Agent: "doctor", Role: agents.RoleWorker}, appOptions{})
	if err != nil {
		d.problem("%v", err)
		return
	}
	for _, sk := range cfg.Skipped {
		// serve leaves it out and serves the others; here it is a problem.
		fmt.Fprintf(d.out, "\nserver %s: NOT LOADED\n", sk.Name)
		d.problem("server %s: %s", sk.Name, proxy.MissingText(sk))
	}
	if len(cfg.Servers) == 0 {
		if len(cfg.Skipped) == 0 {
			fmt.Fprintln(d.out, "upstreams: none configured (only the exploration and pad tools will be served)")
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each server is started once: a second instance at the same time
	// (what --bare adds, after these) would double a cold npx start.
	a.proxy.Start(ctx, nil)
	defer a.proxy.Close()
	settled := waitUpstreams(a.proxy.Upstreams(), d.startWait, d.progress)
	var bareOf map[string]*upstream.Upstream
	if d.bare {
		bp, byName := bareClient(ctx, a.proxy.Upstreams(), d)
		defer bp.Close()
		bareOf = byName
	}

	tools := a.proxy.Tools()
	exposed := map[string]bool{}
	for _, t := range tools {
		exposed[t.Name] = true
	}
	for _, u := range a.proxy.Upstreams() {
		sc := u.Config()
		state, uerr := u.State()
		fmt.Fprintf(d.out, "\nserver %s (%s): ", sc.Name, describeTarget(sc))
		le, needsLogin := upstream.LoginError(uerr)
		switch {
		case state == upstream.StateReady:
			fmt.Fprintln(d.out, "ready")
			// Which MCP revision it speaks, and why: a probe that fell
			// back says what it was answered.
			fmt.Fprintf(d.out, "  protocol: %s\n", u.Protocol())
			d.reportAuth(cfg, sc)
		case needsLogin:
			fmt.Fprintln(d.out, "NEEDS LOGIN")
			d.reportAuth(cfg, sc)
			d.problem("server %s: %s: run `%s`", sc.Name, le.Reason, le.Command)
			continue
		case !settled[u]:
			fmt.Fprintln(d.out, "NOT READY")
			d.problem("server %s: not ready after %s (state %s); raise --timeout if it is slow to start", sc.Name, d.startWait(sc), state)
			continue
		default:
			fmt.Fprintln(d.out, "FAILED")
			d.problem("server %s: failed to start: %v", sc.Name, uerr)
			continue
		}
		if len(sc.Thresholds) == 0 {
			fmt.Fprintf(d.out, "  note: no [mcp.servers.%s.scratchpad] patterns: none of its tools is intercepted\n", sc.Name)
		}
		tw := tabwriter.NewWriter(d.out, 0, 4, 2, ' ', 0)
		n := 0
		for _, t := range tools {
			if t.Server != sc.Name {
				continue
			}
			n++
			fmt.Fprintf(tw, "  %s\t%s\n", t.Name, thresholdText(cfg, sc, t.Upstream))
		}
		tw.Flush()
		if n == 0 {
			fmt.Fprintln(d.out, "  (no tools exposed: check mcp_filter and name clashes)")
		}
		d.reportHidden(cfg, u, bareOf[sc.Name], exposed)
	}
}

// reportAuth says how a server with [auth] is logged in: the stored
// token's state, scope and expiry (never the token).
func (d *doctor) reportAuth(cfg *config.Config, sc *config.Server) {
	if sc.Auth == nil {
		return
	}
	store, done, err := authStore(cfg, nil)
	if err != nil {
		fmt.Fprintf(d.out, "  auth: oauth (%s): %v\n", sc.Auth.Grant, err)
		return
	}
	defer done()
	st, err := newOAuthClient(cfg, *sc, store, d.log).Status()
	fmt.Fprintf(d.out, "  auth: oauth (%s): %s%s; tokens in %s\n", sc.Auth.Grant, authState(st, err), describeAuth(st), store)
}

// checkPad reaches a Redis pad backend with PING; it reports whether the
// pad can be served.
func (d *doctor) checkPad(cfg *config.Config) bool {
	if !cfg.Pad.Enabled || cfg.Pad.Backend != config.BackendRedis {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), padCheckWait)
	defer cancel()
	if err := agents.CheckPad(ctx, cfg.Pad); err != nil {
		d.problem("%s: %v", configName(cfg), err)
		return false
	}
	fmt.Fprintf(d.out, "pad: redis %s (prefix %q, scope %s): reachable\n", cfg.Pad.RedactedRedisURL(), cfg.Pad.RedisPrefix, cfg.Pad.Scope)
	return true
}

// describeTarget is what a server runs or dials, for the report, with
// its secrets masked ([maskArgs], [config.RedactURL]).
func describeTarget(sc *config.Server) string {
	if sc.Transport == config.TransportStdio {
		s := "stdio"
		for _, a := range maskArgs(append(append([]string{}, sc.Cmd...), sc.Args...)) {
			s += " " + shellQuote(a)
		}
		return s
	}
	return sc.Transport + " " + config.RedactURL(sc.URL)
}

// maskArgs is argv with what init would not copy masked as
// [config.Masked], by the same rule ([conversion.secretArgs]): a URL's
// password and query values, the value of a NAME=value, --name=value or
// --name value whose name is a credential's, and an argument that is a
// credential by itself. A URL keeps its scheme, host and path.
func maskArgs(argv []string) []string {
	out := append([]string(nil), argv...)
	for i := 1; i < len(out); i++ {
		a := argv[i]
		switch name, v, isKV := argKV(a); {
		case strings.Contains(a, "://"):
			if u, err := url.Parse(a); err == nil && u.Scheme != "" {
				out[i] = config.RedactURL(a)
			} else if redact.Credential(a) {
				out[i] = config.Masked
			}
		case isKV:
			if redact.LooksLikeCredential(name, v) {
				out[i] = a[:len(a)-len(v)] + config.Masked
			}
		case strings.HasPrefix(argv[i-1], "-") && !strings.Contains(argv[i-1], "=") && !strings.HasPrefix(a, "-"):
			if redact.LooksLikeCredential(strings.TrimLeft(argv[i-1], "-"), a) {
				out[i] = config.Masked
			}
		default:
			if redact.Credential(a) {
				out[i] = config.Masked
			}
		}
	}
	return out
}

func thresholdText(cfg *config.Config, sc *config.Server, tool string) string {
	if !cfg.Agent.Scratchpad.Enabled {
		return "never intercepted (scratchpad disabled)"
	}
	n, ok := sc.Threshold(tool)
	if !ok {
		return "never intercepted"
	}
	return "intercepted at >= " + strconv.Itoa(n) + " tokens"
}

// waitUpstreams polls until every upstream is ready or has failed at
// least once (a restarting upstream has shown its error; waiting through
// its backoff would only repeat it), or until its own wait has passed. It
// reports which upstreams settled.
func waitUpstreams(ups []*upstream.Upstream, wait func(*config.Server) time.Duration, progress io.Writer) map[*upstream.Upstream]bool {
	start := time.Now()
	settled := map[*upstream.Upstream]bool{}
	nextNote := start.Add(progressEvery)
	for {
		now := time.Now()
		done := true
		for _, u := range ups {
			if settled[u] {
				continue
			}
			state, err := u.State()
			switch {
			case state == upstream.StateReady, state == upstream.StateFailed,
				state == upstream.StateRestarting && err != nil:
				settled[u] = true
				fmt.Fprintf(progress, "  %s: %s after %s\n", u.Config().Name, state, now.Sub(start).Round(100*time.Millisecond))
			case now.Sub(start) < wait(u.Config()):
				done = false
			}
		}
		if done {
			return settled
		}
		if now.After(nextNote) {
			// Still waiting: say for whom, so a hung server is seen.
			var names []string
			for _, u := range ups {
				if !settled[u] {
					names = append(names, fmt.Sprintf("%s (up to %s%s)", u.Config().Name, wait(u.Config()), runnerNote(u.Config())))
				}
			}
			fmt.Fprintf(progress, "  waiting for %s: %s so far\n", strings.Join(names, ", "), now.Sub(start).Round(time.Second))
			nextNote = now.Add(progressEvery)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// progressEvery is how often doctor says whom it is still waiting for.
const progressEvery = 3 * time.Second

// doctorWait is how long doctor waits for a server's first start, and
// runnerWait for one a package runner starts: npx, uvx and the like may
// download the package and its dependencies first (a cold npx cache took
// 31 s for server-filesystem on the machine of issue 58).
const (
	doctorWait = 30 * time.Second
	runnerWait = 2 * time.Minute
)

// startWait is how long doctor waits for sc to start: --timeout when it
// was given, else [doctorWait], or [runnerWait] for a package runner.
func (d *doctor) startWait(sc *config.Server) time.Duration {
	if d.waitSet || packageRunner(sc) == "" {
		return d.wait
	}
	return max(d.wait, runnerWait)
}

// runnerNote is ", npx may download it first" for a server a package
// runner starts.
func runnerNote(sc *config.Server) string {
	if r := packageRunner(sc); r != "" {
		return ", " + r + " may download it first"
	}
	return ""
}

// packageRunner names the package runner that starts sc ("npx", "uvx",
// "docker run", …), "" when none does.
func packageRunner(sc *config.Server) string {
	if sc.Transport != config.TransportStdio {
		return ""
	}
	argv := append(append([]string{}, sc.Cmd...), sc.Args...)
	if len(argv) == 0 {
		return ""
	}
	// Either separator: a config written on Windows names npx.cmd so.
	base := strings.ToLower(argv[0][strings.LastIndexAny(argv[0], `/\`)+1:])
	for _, ext := range []string{".exe", ".cmd", ".bat", ".ps1"} {
		base = strings.TrimSuffix(base, ext)
	}
	sub := ""
	if len(argv) > 1 {
		sub = argv[1]
	}
	switch {
	case base == "npx", base == "pnpx", base == "bunx", base == "uvx", base == "pipx":
		return base
	case (base == "npm" || base == "pnpm" || base == "yarn" || base == "bun") && (sub == "exec" || sub == "dlx" || sub == "x"),
		base == "uv" && (sub == "run" || sub == "tool"),
		(base == "docker" || base == "podman") && sub == "run":
		return base + " " + sub
	}
	return ""
}

// checkMemoryDir reports a memory_dir that cannot be used safely: not
// writable, not a directory, or planted by another user (a symlink or a
// directory owned by someone else, e.g. in a shared /tmp, would hand them
// every stored output).
func (d *doctor) checkMemoryDir(dir string) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// serve would create it on the first diverted output; do it now so
		// writability is checked for real.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			d.problem("memory_dir %s: cannot create it: %v", dir, err)
			return
		}
		fmt.Fprintf(d.out, "memory_dir: %s: created\n", dir)
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		d.problem("memory_dir %s: %v", dir, err)
		return
	}
	me := os.Getuid()
	if fi.Mode()&fs.ModeSymlink != 0 {
		if uid, ok := fileOwner(fi); ok && uid != me && uid != 0 {
			d.problem("memory_dir %s: is a symlink owned by another user (uid %d): remove it or point memory_dir elsewhere", dir, uid)
			return
		}
		target, err := filepath.EvalSymlinks(dir)
		if err != nil {
			d.problem("memory_dir %s: broken symlink: %v", dir, err)
			return
		}
		if fi, err = os.Stat(target); err != nil {
			d.problem("memory_dir %s: %v", dir, err)
			return
		}
	}
	if !fi.IsDir() {
		d.problem("memory_dir %s: not a directory", dir)
		return
	}
	if uid, ok := fileOwner(fi); ok && uid != me && uid != 0 {
		d.problem("memory_dir %s: owned by another user (uid %d): they can read and replace stored outputs", dir, uid)
		return
	}
	if perm := fi.Mode().Perm(); perm&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		d.problem("memory_dir %s: writable by every user (mode %v): chmod 700 it", dir, perm)
		return
	}
	// The probe is a temporary file of memdir's atomic write, the way
	// every write there starts (a crash's leftover is a temporary file
	// the sweeps remove).
	md := memdir.At(dir)
	tmp, err := md.WriteTemp(".doctor", func(w io.Writer) error {
		_, err := w.Write([]byte("doctor\n"))
		return err
	})
	if err == nil {
		err = md.Remove(tmp)
	}
	if err != nil {
		d.problem("memory_dir %s: not writable: %v", dir, err)
		return
	}
	fmt.Fprintf(d.out, "memory_dir: %s: ok (writable, yours)\n", dir)
}

// fileOwner returns the owner's uid where the platform has one. It reads
// the Uid field by reflection so this file builds on every platform
// without a syscall.Stat_t variant per OS.
func fileOwner(fi fs.FileInfo) (int, bool) {
	v := reflect.ValueOf(fi.Sys())
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return 0, false
	}
	f := v.FieldByName("Uid")
	if !f.IsValid() || !f.CanUint() {
		return 0, false
	}
	return int(f.Uint()), true
}

// reportRetention prints memory_dir's size by kind and what the next sweep
// would remove under [retention] (a dry run: no live session is known
// here).
func (d *doctor) reportRetention(cfg *config.Config) {
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Retention.SweepTimeout)
	defer cancel()
	rep, err := retention.Sweep(ctx, cfg.MemoryDir, retention.Options{Policy: policy(cfg.Retention), DryRun: true})
	if err != nil {
		d.problem("memory_dir %s: %v", cfg.MemoryDir, err)
		return
	}
	r := cfg.Retention
	fmt.Fprintf(d.out, "retention: max_age %s, runs_max_age %s, max_bytes %s, usage.jsonl rotated above %s (keep %d)",
		ageText(r.MaxAge), ageText(r.RunsMaxAge), sizeText(r.MaxBytes), sizeText(r.UsageMaxBytes), r.UsageKeep)
	if r.Enabled {
		fmt.Fprintf(d.out, "; serve sweeps at start and every %s\n", r.Interval)
	} else {
		fmt.Fprintln(d.out, "; serve does not sweep (enabled = false)")
	}
	fmt.Fprintln(d.out, "next sweep:")
	printSweep(d.out, rep, true)
	fmt.Fprintln(d.out)
}

func ageText(x time.Duration) string {
	switch {
	case x == 0:
		return "off"
	case x%(24*time.Hour) == 0:
		return strconv.Itoa(int(x/(24*time.Hour))) + "d"
	}
	return x.String()
}

func sizeText(n int64) string {
	if n == 0 {
		return "off"
	}
	return config.SizeText(n)
}
