//go:build bench

package main

// Big results at wire speed (issue 17), run by scripts/bench-wire.sh
// through `make bench`: one go-sdk client calls the bench upstream's blob
// tool directly and through scratchpad-mcp, for results of about 24 and
// 123 MB on the wire, passed through (threshold above the size) and
// diverted, over stdio serving, streamable HTTP serving, and from a
// streamable-HTTP upstream. It prints medians, the proxy's peak RSS
// (VmHWM of a fresh proxy per line) and the client's floors (the same
// call answered by a replay peer, bench_replay_test.go); it asserts
// nothing about time.
//
//	WIRE_SIZES=24,123 WIRE_RUNS=3 WIRE_FORMAT=json WIRE_MODES=pass,divert go test -tags bench -count=1 -run TestBenchWire -v ./cmd/scratchpad-mcp/

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

func envList(name, def string) []string {
	v := os.Getenv(name)
	if v == "" {
		v = def
	}
	return strings.Split(v, ",")
}

// wireProxy is one scratchpad-mcp process and a client session to it.
type wireProxy struct {
	pid  int
	sess wireClient
	mem  string
	stop func()
}

// vmHWM is the proxy's peak resident set so far, in MiB.
func (p *wireProxy) vmHWM() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		return -1
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return -1
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return float64(kb) / 1024
}

// wireConfig writes a config whose one server "b" is the bench upstream
// (stdio, or the streamable HTTP url), blob diverted at threshold tokens.
func wireConfig(t *testing.T, upURL string, threshold int, extra string) (path, mem string) {
	dir := t.TempDir()
	mem = filepath.Join(dir, "mem")
	srv := fmt.Sprintf("transport = \"stdio\"\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = %q }\n", upstreamCmd(), testupstream.BenchMode)
	if dir, ok := strings.CutPrefix(upURL, "node:"); ok {
		srv = fmt.Sprintf("transport = \"stdio\"\ncmd = [\"node\", %q, %q]\n", nodeBenchScript(t), dir)
	} else if upURL != "" {
		srv = fmt.Sprintf("transport = \"http_streamable\"\nurl = %q\n", upURL)
	}
	// A pass-through must fit the agent's budget, or it is diverted
	// (issue 53): the pass mode's agent has the largest window there is.
	window := ""
	if threshold >= 1_000_000_000 {
		window = "context_window = 100000000\n"
	}
	cfg := fmt.Sprintf("memory_dir = %q\n\n[agent]\nmodel = \"gpt-4o\"\n%s\n[mcp.servers.b]\n%stimeout = \"10m\"\n%s\n[mcp.servers.b.scratchpad]\n\"blob\" = { min_tokens = %d }\n",
		mem, window, srv, extra, threshold)
	path = filepath.Join(dir, "wire.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, mem
}

// startWireProxy runs scratchpad-mcp serving over stdio or streamable HTTP.
func startWireProxy(t *testing.T, serve, cfg, profile string) *wireProxy {
	t.Helper()
	args := []string{"serve", "--config", cfg, "--log-level", envOr("WIRE_LOG_LEVEL", "info")}
	if profile != "" {
		args = append(args, "--cpuprofile", profile)
	}
	if serve == "http" {
		args = append(args, "--transport", "http", "--addr", "127.0.0.1:0")
	}
	cmd := exec.Command(binary(t), args...)
	stderr, _ := cmd.StderrPipe()
	var stdin io.WriteCloser
	var stdout io.ReadCloser
	if serve == "stdio" {
		stdin, _ = cmd.StdinPipe()
		stdout, _ = cmd.StdoutPipe()
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=serving .*addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
			if testing.Verbose() && os.Getenv("WIRE_LOG") != "" {
				fmt.Fprintln(os.Stderr, "proxy:", sc.Text())
			}
		}
	}()
	var sess wireClient
	if serve == "http" {
		select {
		case a := <-addr:
			sess = dialProxyHTTP(t, "http://"+a+"/mcp")
		case <-time.After(30 * time.Second):
			t.Fatal("proxy did not report its address")
		}
	} else {
		sess = dialProxyStdio(t, stdout, stdin)
	}
	waitForWireTool(t, sess, "blob")
	stop := func() {
		sess.Close()
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	return &wireProxy{pid: cmd.Process.Pid, sess: sess, stop: stop}
}

func median(d []time.Duration) time.Duration { return pct(d, .5) }

// waitIdle waits, up to a minute, until process pid has used no CPU for
// 100 ms.
func waitIdle(pid int) {
	ticks := func() string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return ""
		}
		// utime and stime, fields 14 and 15, after the command in parentheses.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return ""
		}
		return f[11] + " " + f[12]
	}
	last := ticks()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline) && last != ""; {
		time.Sleep(100 * time.Millisecond)
		now := ticks()
		if now == last {
			return
		}
		last = now
	}
}

func callBlob(t *testing.T, c wireClient, format string, mb int) (time.Duration, wireResult) {
	t.Helper()
	start := time.Now()
	res, err := c.call("blob", map[string]any{"mb": mb, "format": format})
	if err != nil {
		t.Fatal(err)
	}
	return time.Since(start), res
}

func TestBenchWire(t *testing.T) {
	sizes := envList("WIRE_SIZES", "24,123")
	format := envList("WIRE_FORMAT", "json")[0]
	paths := envList("WIRE_PATHS", "stdio>stdio,stdio>http,http>stdio")
	runsFor := func(mb int) int {
		if v, err := strconv.Atoi(os.Getenv("WIRE_RUNS")); err == nil && v > 0 {
			return v
		}
		if mb > 50 {
			return 1
		}
		return 3
	}
	// The HTTP upstream is served by this process; the stdio one is this
	// test binary re-executed.
	hts := httptest.NewServer(testupstream.BenchHandler())
	defer hts.Close()

	fmt.Printf("client: %s, to the proxy in %s\n", wireKind(), map[bool]string{false: "2025-11-25", true: "2026-07-28"}[wireModern()])
	fmt.Printf("%-30s %5s %-7s %9s %9s %7s %9s %9s %9s %9s %s\n", "path (upstream > serving)", "MB", "mode", "direct", "proxy", "ratio",
		"floor up", "floor srv", "adj", "peak RSS", "runs")
	modes := envList("WIRE_MODES", "pass,divert")
	for _, path := range paths {
		upKind, serve, _ := strings.Cut(path, ">")
		upURL := ""
		switch upKind {
		case "http":
			upURL = hts.URL + "/mcp"
		case "node":
			// The TypeScript SDK's server, serving the Go upstream's
			// outputs (written for it here).
			upURL = "node:" + nodeBlobs(t, format, sizes)
		}
		for _, s := range sizes {
			mb, _ := strconv.Atoi(s)
			runs := runsFor(mb)
			// The direct client and a fresh proxy per mode, called in
			// turn each run, so that all see the same machine load.
			var direct wireClient
			if os.Getenv("WIRE_DIRECT") == "0" {
				// (no direct calls: for sizes a client cannot hold)
			} else if upKind == "http" {
				direct = dialHTTP(t, upURL)
			} else if upKind == "node" {
				direct = stdioUpstream(t, os.Environ(), "node", nodeBenchScript(t), strings.TrimPrefix(upURL, "node:"))
			} else {
				direct = stdioUpstream(t, append(os.Environ(), testupstream.EnvMode+"="+testupstream.BenchMode), upstreamCmd())
			}
			if direct != nil {
				callBlob(t, direct, format, mb) // the upstream builds and keeps the output
			}
			proxies := map[string]*wireProxy{}
			for _, mode := range modes {
				threshold := 1_000_000_000
				if mode == "divert" {
					threshold = 1000
				}
				cfg, mem := wireConfig(t, upURL, threshold, os.Getenv("WIRE_SERVER_EXTRA"))
				profile := ""
				if dir := os.Getenv("WIRE_PROFILE"); dir != "" {
					profile = filepath.Join(dir, fmt.Sprintf("%s-%s-%dMB-%s.prof", upKind, serve, mb, mode))
				}
				p := startWireProxy(t, serve, cfg, profile)
				p.mem = mem
				if (upKind == "stdio" || upKind == "node") && os.Getenv("WIRE_WARM") != "0" {
					callBlobQuiet(t, p.sess, format, mb, mem) // its own upstream builds the output
				}
				proxies[mode] = p
			}
			// The floors: the same client reading the same answer, held
			// ready by a replay peer, over the upstream's transport and
			// over the serving one (see bench_replay_test.go).
			floorKinds := []string{upKind}
			if serve != upKind {
				floorKinds = append(floorKinds, serve)
			}
			floors := map[string]wireClient{}
			fd := map[string][]time.Duration{}
			if os.Getenv("WIRE_FLOOR") != "0" {
				answer, err := json.Marshal(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: testupstream.Blob(format, mb)}}})
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range floorKinds {
					floors[k] = replaySession(t, k, answer)
				}
			}
			var dd []time.Duration
			pd := map[string][]time.Duration{}
			for i := 0; i < runs; i++ {
				for _, k := range floorKinds {
					if c := floors[k]; c != nil {
						d, _ := callBlob(t, c, format, mb)
						fd[k] = append(fd[k], d)
					}
				}
				if direct != nil {
					d, _ := callBlob(t, direct, format, mb)
					dd = append(dd, d)
				} else {
					dd = append(dd, 0)
				}
				for _, mode := range modes {
					p := proxies[mode]
					_ = os.RemoveAll(filepath.Join(p.mem, "scratchpad")) // a fresh write each time
					d, res := callBlob(t, p.sess, format, mb)
					pd[mode] = append(pd[mode], d)
					// A diverted output's exact count goes on in the
					// background: not into the next call's time.
					waitIdle(p.pid)
					if res.isError {
						fmt.Printf("%s, %d MB, %s: tool error: %.400s\n", path, mb, mode, res.text)
					} else if res.diverted != (mode == "divert") {
						t.Fatalf("%s %s: diverted=%v (%d bytes): %.300s", path, mode, res.diverted, res.size, res.text)
					}
				}
			}
			if direct != nil {
				direct.Close()
			}
			for _, c := range floors {
				c.Close()
			}
			floorOf := func(k string) (time.Duration, string) {
				if len(fd[k]) == 0 {
					return 0, "—"
				}
				m := median(fd[k])
				return m, m.Round(time.Millisecond).String()
			}
			fu, fus := floorOf(upKind)
			fs, fss := floorOf(serve)
			for _, mode := range modes {
				p := proxies[mode]
				rss := p.vmHWM()
				p.stop()
				dm, pm := median(dd), median(pd[mode])
				ds, ratio, adj := "—", "—", "—"
				if direct != nil {
					ds, ratio = dm.Round(time.Millisecond).String(), fmt.Sprintf("%.2fx", float64(pm)/float64(dm))
					// The ratio to the direct call moved onto the serving
					// transport: its time less the upstream transport's
					// floor plus the serving one's.
					if mode == "pass" && fu > 0 && fs > 0 {
						adj = fmt.Sprintf("%.2fx", float64(pm)/float64(dm-fu+fs))
					}
				}
				fmt.Printf("%-30s %5d %-7s %9s %9s %7s %9s %9s %9s %5.0f MiB %d\n", upKind+" upstream > "+serve+" serving", mb, mode,
					ds, pm.Round(time.Millisecond), ratio, fus, fss, adj, rss, runs)
			}
		}
	}
}

// callBlobQuiet makes a stdio upstream build its output before the timed
// calls. The proxy's peak RSS then includes this call, which is the same
// size as the timed ones.
func callBlobQuiet(t *testing.T, c wireClient, format string, mb int, mem string) {
	callBlob(t, c, format, mb)
	_ = os.RemoveAll(filepath.Join(mem, "scratchpad"))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// nodeBenchScript is e2e/benchblob.mjs, the Node.js bench upstream (its
// packages are e2e's: scripts/deps.sh).
func nodeBenchScript(t *testing.T) string {
	p, err := filepath.Abs("../../e2e/benchblob.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("../../e2e/node_modules/@modelcontextprotocol/sdk"); err != nil {
		t.Skip("the e2e npm packages are not installed (scripts/deps.sh)")
	}
	return p
}

// nodeBlobs writes the Go upstream's outputs of format at sizes (MB) into
// a folder the Node.js upstream serves them from, and returns it.
func nodeBlobs(t *testing.T, format string, sizes []string) string {
	dir := t.TempDir()
	for _, s := range sizes {
		mb, _ := strconv.Atoi(s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.txt", format, mb)), []byte(testupstream.Blob(format, mb)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
