//go:build unix

// Command soak runs scratchpad-mcp under load for make soak (not in CI):
// 8 streamable-HTTP clients on loopback call a mix of tools (a pass-through
// call, a diverted listing then an exploration of it, pad reads and
// appends) against 3 stdio upstreams, one of which is SIGKILLed every
// 30 s (the proxy restarts it), next to a hostile mix (hostile.go). At
// the end it prints calls/s, p50/p99,
// errors by kind, and the proxy's RSS and goroutines at start and end,
// and fails when they grew beyond the bound it states.
//
// The upstreams are this binary itself (internal/testupstream).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// Bounds on growth between the start (clients connected, warmed up) and
// the end (same clients, before they close). The Go heap may fill what is
// bounded by design: the HTTP sessions' event store for resumable streams
// (64 MiB together) and the explore cache (cache_mb = 32 here), plus 32
// MiB of slack; RSS may be twice that (GOGC=100 lets the heap double
// before a collection).
const (
	maxGoroutineGrowth = 50
	maxHeapGrowthMiB   = 64 + 32 + 32
	maxRSSGrowthMiB    = 2 * maxHeapGrowthMiB
	// The owners' proxy holds little: two owners' sessions and upstreams.
	maxOwnersRSSGrowthMiB = 64
	// maxIdleCPUPercent bounds the proxy's CPU once every client has
	// stopped: abandoned work still running would hold a core.
	maxIdleCPUPercent = 10
)

func main() {
	testupstream.MaybeRun()
	bin := flag.String("bin", "bin/scratchpad-mcp", "scratchpad-mcp binary")
	dur := flag.Duration("duration", 10*time.Minute, "how long to call")
	clients := flag.Int("clients", 8, "HTTP clients")
	killEvery := flag.Duration("kill-every", 30*time.Second, "SIGKILL upstream c this often")
	withHostile := flag.Bool("hostile", true, "run the hostile mix next to the clients (stalled readers, refused sockets, a session flood, cancelled and abandoned greps, huge arguments, two owners on a shared upstream beside an unauthenticated flood)")
	flag.Parse()
	if err := run(*bin, *dur, *clients, *killEvery, *withHostile); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type stats struct {
	mu      sync.Mutex
	lat     []time.Duration
	errs    map[string]int
	first   map[string]string // the first message of each kind of error
	calls   int
	kills   int
	started time.Time
}

func (s *stats) record(d time.Duration, kind string) { s.recordMsg(d, kind, "") }

func (s *stats) recordMsg(d time.Duration, kind, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if kind != "" {
		s.errs[kind]++
		if s.first == nil {
			s.first = map[string]string{}
		}
		if _, ok := s.first[kind]; !ok {
			s.first[kind] = msg
		}
		return
	}
	s.lat = append(s.lat, d)
}

func run(bin string, dur time.Duration, nClients int, killEvery time.Duration, withHostile bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "scratchpad-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "memory_dir = %q\n\n[agent]\nmodel = \"gpt-4o\"\n\n[agent.scratchpad]\nmax_extraction_tokens = 4000\n", filepath.Join(dir, "mem"))
	// Bounded caches, so growth means a leak: the parsed-file cache at
	// 32 MiB and ledger entries (every round appends one) expiring.
	cfg.WriteString("\n[explore]\ncache_mb = 32\n\n[pad]\nentry_ttl = \"20s\"\n")
	fmt.Fprintf(&cfg, "\n[http]\nmax_sessions = %d\n", hostileSessionsCap)
	for _, name := range []string{"a", "b", "c"} {
		fmt.Fprintf(&cfg, "\n[mcp.servers.%s]\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = \"stdio\" }\nprefix = %q\nrestart_max_attempts = 1000\n", name, self, name)
		fmt.Fprintf(&cfg, "\n[mcp.servers.%s.scratchpad]\n\"listing\" = 2000\n", name)
	}
	cfgText := cfg.String()
	cfgPath := filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(cfgPath, []byte(cfgText), 0o600); err != nil {
		return err
	}

	proxy, base, err := startProxy(context.Background(), bin, cfgPath, "--debug-stats")
	if err != nil {
		return err
	}
	defer func() { _ = proxy.Process.Signal(os.Interrupt); _ = proxy.Wait() }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sessions := make([]*mcp.ClientSession, nClients)
	for i := range sessions {
		hc := &http.Client{Transport: header{"X-Scratchpad-Agent": fmt.Sprintf("soak-%d", i)}}
		c := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		sessions[i] = cs
	}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	// Warm up: every upstream listed, one round of every call.
	waitTools(ctx, sessions[0], "c__pid")
	st := &stats{errs: map[string]int{}}
	for i, s := range sessions {
		round(ctx, s, i, 0, &stats{errs: map[string]int{}})
	}
	startStats, err := proxyStats(base, proxy.Process.Pid)
	if err != nil {
		return err
	}
	startFDs := openFDs(proxy.Process.Pid)

	st.started = time.Now()
	end := st.started.Add(dur)
	hc := &hostileCounts{}
	orc := &oneRequestCounts{}
	oc := &ownersCounts{}
	mc := &modernCounts{}
	hctx, stopHostile := context.WithCancel(ctx)
	defer stopHostile()
	var hwg, owg sync.WaitGroup
	var ownersPID, ownersStartFDs int
	var ownersStartRSS int64
	if withHostile {
		file := ""
		if m := fileRe.FindStringSubmatch(call(ctx, sessions[0], &stats{errs: map[string]int{}}, "a__listing", map[string]any{"n": 400})); m != nil {
			file = m[1]
		}
		hwg.Go(func() { hostile(hctx, base, end, file, hc).Wait() })
		hwg.Go(func() { oneRequest(hctx, base, end, orc) })
		op, obase, err := ownersProxy(ctx, bin, self, dir)
		if err != nil {
			return err
		}
		defer func() { _ = op.Process.Signal(os.Interrupt); _ = op.Wait() }()
		ownersPID = op.Process.Pid
		ownersStartFDs, ownersStartRSS = openFDs(ownersPID), rssKiB(ownersPID)
		owg.Go(func() { owners(hctx, obase, end, oc).Wait() })
		owg.Go(func() { modern(hctx, obase, end, mc).Wait() })
	}
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 1; time.Now().Before(end); n++ {
				round(ctx, s, i, n, st)
			}
		}()
	}
	// Kill upstream c every killEvery.
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(killEvery)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if time.Now().After(end) {
					return
				}
				cctx, ccancel := context.WithTimeout(ctx, 15*time.Second)
				res, err := sessions[0].CallTool(cctx, &mcp.CallToolParams{Name: "c__pid", Arguments: map[string]any{}})
				ccancel()
				if err == nil && len(res.Content) > 0 {
					if tc, ok := res.Content[0].(*mcp.TextContent); ok {
						if pid, err := strconv.Atoi(strings.TrimSpace(tc.Text)); err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil {
							st.mu.Lock()
							st.kills++
							st.mu.Unlock()
						}
					}
				}
			case <-time.After(time.Until(end)):
				return
			}
		}
	}()
	wg.Wait()
	elapsed := time.Since(st.started)
	stopHostile()
	hwg.Wait()
	owg.Wait()
	time.Sleep(2 * time.Second) // let the last answers' goroutines end
	// Nothing abandoned may still be working: the proxy idles (its own
	// timers only) once every client has stopped calling.
	idleCPU := cpuSeconds(proxy.Process.Pid)
	time.Sleep(3 * time.Second)
	idleCPU = (cpuSeconds(proxy.Process.Pid) - idleCPU) / 3
	endStats, err := proxyStats(base, proxy.Process.Pid)
	if err != nil {
		return err
	}
	if p := os.Getenv("SOAK_HEAP_PROFILE"); p != "" {
		if resp, err := http.Get(base + "/debug/pprof/heap?gc=1"); err == nil {
			if f, err := os.Create(p); err == nil {
				_, _ = io.Copy(f, resp.Body)
				f.Close()
			}
			resp.Body.Close()
		}
	}

	slices.Sort(st.lat)
	pct := func(p float64) time.Duration {
		if len(st.lat) == 0 {
			return 0
		}
		return st.lat[int(float64(len(st.lat)-1)*p)]
	}
	fmt.Printf("soak: %d clients, 3 upstreams (c SIGKILLed every %s: %d kills), %s\n", nClients, killEvery, st.kills, elapsed.Round(time.Second))
	fmt.Printf("calls: %d (%.1f/s), p50 %s, p99 %s\n", st.calls, float64(st.calls)/elapsed.Seconds(), pct(0.50).Round(time.Microsecond), pct(0.99).Round(time.Microsecond))
	kinds := make([]string, 0, len(st.errs))
	for k := range st.errs {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	if len(kinds) == 0 {
		fmt.Println("errors: none")
	}
	for _, k := range kinds {
		first := st.first[k]
		if len(first) > 200 {
			first = first[:200] + "…"
		}
		fmt.Printf("errors: %-28s %d (first: %s)\n", k, st.errs[k], first)
	}
	goroutineBound, heapBound, rssBound := maxGoroutineGrowth, maxHeapGrowthMiB, maxRSSGrowthMiB
	if withHostile {
		// The flood's sessions live until their idle TTL: each holds
		// two goroutines and up to ~100 KiB; the hostile clients a few
		// more.
		goroutineBound += 2*hostileSessionsCap + 16
		heapBound += hostileSessionsCap * 100 >> 10
		rssBound = 2 * heapBound
	}
	fmt.Printf("proxy RSS: %d MiB at start, %d MiB at end (bound: +%d MiB)\n", startStats.rssKiB>>10, endStats.rssKiB>>10, rssBound)
	fmt.Printf("proxy Go heap in use: %d MiB at start, %d MiB at end (bound: +%d MiB)\n", startStats.HeapAlloc>>20, endStats.HeapAlloc>>20, heapBound)
	fmt.Printf("proxy goroutines: %d at start, %d at end (bound: +%d)\n", startStats.Goroutines, endStats.Goroutines, goroutineBound)
	endFDs := openFDs(proxy.Process.Pid)
	fmt.Printf("proxy descriptors: %d at start, %d at end (bound: +%d)\n", startFDs, endFDs, maxFDGrowth)
	fmt.Printf("proxy CPU when idle: %.0f%% of a core (bound: %d%%)\n", 100*idleCPU, maxIdleCPUPercent)
	var fail []string
	if idleCPU*100 > maxIdleCPUPercent {
		fail = append(fail, "work still running after every client stopped")
	}
	if withHostile {
		fmt.Printf("hostile: %s\n", hc)
		fmt.Printf("one request: %s\n", orc)
		fmt.Printf("owners: %s\n", oc)
		fmt.Printf("2026-07-28: %s\n", mc)
		fail = append(fail, mc.failed()...)
		ownersEndFDs, ownersEndRSS := openFDs(ownersPID), rssKiB(ownersPID)
		fmt.Printf("owners' proxy: descriptors %d at start, %d at end (bound: +%d); RSS %d MiB at start, %d MiB at end (bound: +%d MiB)\n",
			ownersStartFDs, ownersEndFDs, maxFDGrowth+parkedPerOwner, ownersStartRSS>>10, ownersEndRSS>>10, maxOwnersRSSGrowthMiB)
		if orc.hugeContextRefused.Load() != orc.hugeContext.Load() || orc.hugeFieldsRefused.Load() != orc.hugeFields.Load() || orc.hugeContext.Load() == 0 {
			fail = append(fail, "a huge argument was not refused")
		}
		if orc.disconnected.Load() == 0 {
			fail = append(fail, "no grep was abandoned")
		}
		if oc.sharedMissing.Load() > 0 || oc.sharedListed.Load() == 0 {
			fail = append(fail, "an owner did not list the shared server's tools")
		}
		if oc.failed.Load() > 0 {
			fail = append(fail, "an owner's call failed")
		}
		if n := oc.fresh.Load(); n == 0 || oc.freshOK.Load()*10 < n*9 {
			fail = append(fail, "fresh authenticated connections were locked out by the flood")
		}
		// Each of alice's parked calls holds its stream to the asking
		// upstream open, by design, until answered or 10 minutes pass.
		if ownersEndFDs > ownersStartFDs+maxFDGrowth+parkedPerOwner {
			fail = append(fail, "the owners' proxy's descriptors grew")
		}
		if (ownersEndRSS-ownersStartRSS)>>10 > maxOwnersRSSGrowthMiB {
			fail = append(fail, "the owners' proxy's RSS grew")
		}
		if hc.refusedOpen.Load() > 0 {
			fail = append(fail, "refused sockets left open")
		}
		if hc.flood429.Load() == 0 {
			fail = append(fail, "the session flood never met its cap")
		}
	}
	if endFDs > startFDs+maxFDGrowth {
		fail = append(fail, "descriptors grew")
	}
	if endStats.Goroutines > startStats.Goroutines+goroutineBound {
		fail = append(fail, "goroutines grew")
	}
	if int64(endStats.HeapAlloc>>20)-int64(startStats.HeapAlloc>>20) > int64(heapBound) {
		fail = append(fail, "heap grew")
	}
	if (endStats.rssKiB-startStats.rssKiB)>>10 > int64(rssBound) {
		fail = append(fail, "RSS grew")
	}
	if len(fail) > 0 {
		return errors.New(strings.Join(fail, ", "))
	}
	fmt.Println("soak: ok")
	return nil
}

// round is one client's turn: a pass-through call on each upstream, a
// diverted listing explored with head, and the pad.
func round(ctx context.Context, s *mcp.ClientSession, client, n int, st *stats) {
	up := []string{"a", "b", "c"}[n%3]
	call(ctx, s, st, up+"__words", map[string]any{"n": 50})
	out := call(ctx, s, st, up+"__listing", map[string]any{"n": 300 + n%50})
	if m := fileRe.FindStringSubmatch(out); m != nil {
		call(ctx, s, st, "head", map[string]any{"file": m[1], "lines": 20})
	}
	call(ctx, s, st, "append_scratchpad", map[string]any{"note": fmt.Sprintf("client %d round %d", client, n)})
	call(ctx, s, st, "read_scratchpad", map[string]any{})
}

var fileRe = regexp.MustCompile(`(?m)^file: (\S+)$`)

func call(ctx context.Context, s *mcp.ClientSession, st *stats, name string, args map[string]any) string {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t0 := time.Now()
	res, err := s.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
	d := time.Since(t0)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		st.record(d, "timeout")
		return ""
	case err != nil:
		kind := "protocol error"
		if strings.Contains(err.Error(), "unavailable") {
			kind = "upstream unavailable"
		} else if strings.Contains(err.Error(), "exited") || strings.Contains(err.Error(), "lost") {
			kind = "upstream died mid-call"
		}
		st.recordMsg(d, kind, name+": "+err.Error())
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		kind := "tool error"
		if strings.Contains(b.String(), "unavailable") {
			kind = "tool error: upstream unavailable"
		} else if strings.Contains(b.String(), "exited") {
			kind = "tool error: upstream died mid-call"
		}
		st.recordMsg(d, kind, name+": "+b.String())
		return b.String()
	}
	st.record(d, "")
	return b.String()
}

func waitTools(ctx context.Context, s *mcp.ClientSession, name string) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		res, err := s.ListTools(ctx, nil)
		if err != nil {
			continue
		}
		for _, t := range res.Tools {
			if t.Name == name {
				return
			}
		}
	}
}

type procStats struct {
	Goroutines int    `json:"goroutines"`
	HeapAlloc  uint64 `json:"heap_alloc"`
	rssKiB     int64
}

// proxyStats reads the proxy's goroutines and live heap, having it
// return freed memory to the system first, and then its RSS: what it
// holds, not what the runtime's scavenger has yet to give back.
func proxyStats(base string, pid int) (procStats, error) {
	var ps procStats
	resp, err := http.Get(base + "/debug/stats?release=1")
	if err != nil {
		return ps, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&ps); err != nil {
		return ps, err
	}
	ps.rssKiB = rssKiB(pid)
	return ps, nil
}

// startProxy starts scratchpad-mcp serving streamable HTTP on a free
// loopback port with the config at path, and returns it with its base
// URL once it has logged where it listens.
func startProxy(ctx context.Context, bin, path string, extra ...string) (*exec.Cmd, string, error) {
	args := append([]string{"serve", "--config", path, "--transport", "http", "--addr", "127.0.0.1:0"}, extra...)
	p := exec.CommandContext(ctx, bin, args...)
	stderr, _ := p.StderrPipe()
	if err := p.Start(); err != nil {
		return nil, "", err
	}
	addrc := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=serving .*addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
		}
	}()
	select {
	case a := <-addrc:
		return p, "http://" + a, nil
	case <-time.After(30 * time.Second):
		_ = p.Process.Kill()
		_ = p.Wait()
		return nil, "", fmt.Errorf("%s did not report its address", path)
	}
}

// rssKiB is a process's resident set, from /proc.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return -1
}

// cpuSeconds is a process's user and system CPU time, from /proc (clock
// ticks of 1/100 s, as Linux reports them to user space).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which may hold spaces: state is
	// field 3, utime 14 and stime 15.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+1:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}

type header map[string]string

func (h header) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}
