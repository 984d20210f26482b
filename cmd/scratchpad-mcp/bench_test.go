//go:build bench

package main

// Proxy benchmarks (issue 2), run by scripts/bench-proxy.sh through
// `make bench`. They print figures; they assert nothing about time.

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func pct(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(float64(len(s)-1)*p)]
}

func timeCalls(t *testing.T, c *mcp.ClientSession, n int, name string, args map[string]any) []time.Duration {
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		req := &mcp.CallToolParams{Name: name, Arguments: args}
		start := time.Now()
		if _, err := c.CallTool(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Since(start))
	}
	return out
}

// unlimitedStdioSession is stdioSession without go-sdk's cap on one
// inbound line (16 MiB; CommandTransport has no setting for it), for the
// direct client that reads a 20 MB result whole.
func unlimitedStdioSession(t *testing.T, env []string, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	stdout, stdin := startPiped(t, env, bin, args...)
	return connect(t, &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: -1})
}

// startPiped starts bin with env and returns its stdout and stdin; closing
// stdin ends it (killed 10 s after the test if it does not).
func startPiped(t *testing.T, env []string, bin string, args ...string) (io.ReadCloser, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if testing.Verbose() && os.Getenv("WIRE_LOG") != "" {
		cmd.Stderr = os.Stderr
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kill := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
		defer kill.Stop()
		_ = cmd.Wait()
	})
	return stdout, stdin
}

func TestBenchPassThroughLatency(t *testing.T) {
	const n = 1000
	direct := stdioSession(t, append(os.Environ(), "SCRATCHPAD_TESTUPSTREAM=stdio"), upstreamCmd())
	defer direct.Close()
	cfg, _ := writeConfig(t, "")
	proxied := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "error")
	defer proxied.Close()
	waitForTool(t, proxied, "echo")
	args := map[string]any{"text": "ping"}
	timeCalls(t, direct, 100, "echo", args) // warm up both
	timeCalls(t, proxied, 100, "echo", args)
	d := timeCalls(t, direct, n, "echo", args)
	p := timeCalls(t, proxied, n, "echo", args)
	fmt.Printf("pass-through echo, %d calls over stdio: direct p50 %v p99 %v | via scratchpad-mcp p50 %v p99 %v | added p50 %v p99 %v\n",
		n, pct(d, .5), pct(d, .99), pct(p, .5), pct(p, .99), pct(p, .5)-pct(d, .5), pct(p, .99)-pct(d, .99))
}

func TestBenchStartupThreeUpstreams(t *testing.T) {
	dir := t.TempDir()
	cfg := fmt.Sprintf("memory_dir = %q\n", filepath.Join(dir, "mem"))
	for _, name := range []string{"a", "b", "c"} {
		cfg += fmt.Sprintf("\n[mcp.servers.%s]\ntransport = \"stdio\"\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = \"stdio\" }\nprefix = %q\n", name, upstreamCmd(), name)
	}
	path := filepath.Join(dir, "three.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	bin := binary(t)
	var ds []time.Duration
	for i := 0; i < 11; i++ {
		start := time.Now()
		c := stdioSession(t, nil, bin, "serve", "--config", path, "--log-level", "error")
		ds = append(ds, time.Since(start))
		c.Close()
	}
	fmt.Printf("process start → initialize reply, 3 stdio upstreams, 11 runs: median %v (min %v, max %v)\n", pct(ds, .5), pct(ds, 0), pct(ds, 1))
}

func TestBenchDivert20MB(t *testing.T) {
	// ~20 MB compact JSON: each listing item is ~250 bytes.
	const items = 80000
	direct := unlimitedStdioSession(t, append(os.Environ(), "SCRATCHPAD_TESTUPSTREAM=stdio"), upstreamCmd())
	defer direct.Close()
	cfg, mem := writeConfig(t, "")
	proxied := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "error")
	defer proxied.Close()
	waitForTool(t, proxied, "listing")
	args := map[string]any{"n": items}
	var d, p, own []time.Duration
	for i := 0; i < 5; i++ {
		d = append(d, timeCalls(t, direct, 1, "listing", args)...)
		_ = os.RemoveAll(filepath.Join(mem, "scratchpad")) // measure a fresh write each time
		_ = os.MkdirAll(filepath.Join(mem, "scratchpad"), 0o700)
		req := &mcp.CallToolParams{Name: "listing", Arguments: args}
		start := time.Now()
		res, err := proxied.CallTool(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		p = append(p, time.Since(start))
		meta, _ := res.Meta["scratchpad/diverted"].(map[string]any)
		ms, _ := meta["elapsed_ms"].(float64)
		own = append(own, time.Duration(ms*float64(time.Millisecond)))
	}
	out, _ := exec.Command("du", "-sh", filepath.Join(mem, "scratchpad")).Output()
	fmt.Printf("20 MB JSON result (%d items), 5 runs: direct (upstream → client, full result) median %v | via scratchpad-mcp (pointer to client) median %v, of which divert (count + pretty-print + atomic write + sketch) median %v | stored %s",
		items, pct(d, .5), pct(p, .5), pct(own, .5), out)
}

// TestBenchTelemetryOverhead: the pass-through echo through the binary
// with [telemetry] off and with metrics only (metrics_addr: every call's
// server and client spans record the operation histograms, the token
// counters and the audit tally), rounds alternating so that the machine's
// load falls on both alike.
func TestBenchTelemetryOverhead(t *testing.T) {
	const rounds, n = 5, 200
	off, _ := writeConfig(t, "")
	on, _ := writeConfig(t, "\n[telemetry]\nmetrics_addr = \""+freeAddr(t)+"\"\n")
	sessions := map[string]*mcp.ClientSession{}
	for name, cfg := range map[string]string{"off": off, "metrics": on} {
		c := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "error")
		defer c.Close()
		waitForTool(t, c, "echo")
		timeCalls(t, c, 100, "echo", map[string]any{"text": "ping"}) // warm up
		sessions[name] = c
	}
	d := map[string][]time.Duration{}
	for range rounds {
		for _, name := range []string{"off", "metrics"} {
			d[name] = append(d[name], timeCalls(t, sessions[name], n, "echo", map[string]any{"text": "ping"})...)
		}
	}
	fmt.Printf("telemetry pass-through echo, %d calls over stdio: off p50 %v p99 %v | metrics only p50 %v p99 %v | added p50 %v\n",
		rounds*n, pct(d["off"], .5), pct(d["off"], .99), pct(d["metrics"], .5), pct(d["metrics"], .99), pct(d["metrics"], .5)-pct(d["off"], .5))
}
