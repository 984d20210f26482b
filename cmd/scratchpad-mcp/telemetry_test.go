package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/dashboard"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testprom"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// freeAddr is a loopback address nobody listens on (now).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestServeTwiceWithOneMetricsAddr (issue 58): two instances of one
// config with [telemetry] metrics_addr (a desktop client that starts it
// twice) both serve their tools; the one that finds the port taken says
// so in a warning naming the key, and serves no metrics.
func TestServeTwiceWithOneMetricsAddr(t *testing.T) {
	maddr := freeAddr(t)
	cfg, _ := writeConfig(t, "\n[telemetry]\nmetrics_addr = \""+maddr+"\"\n")
	var logs [2]lockedLog
	var sessions [2]*mcp.ClientSession
	for i := range sessions {
		cmd := exec.Command(binary(t), "serve", "--config", cfg)
		cmd.Stderr = &logs[i]
		sessions[i] = connect(t, &mcp.CommandTransport{Command: cmd})
		defer sessions[i].Close()
		if i == 0 {
			// The first one holds the port before the second starts.
			testwait.For(t, "the first instance's /metrics", func() bool {
				resp, err := http.Get("http://" + maddr + "/metrics")
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == 200
			})
		}
	}
	for i, cs := range sessions {
		waitForTool(t, cs, "listing")
		if out := callTool(t, cs, "echo", map[string]any{"text": "hi"}); !strings.Contains(out, "hi") {
			t.Errorf("instance %d: echo answered %q", i+1, out)
		}
	}
	want := "scratchpad.toml: [telemetry] metrics_addr: listen tcp " + maddr
	testwait.For(t, "the second instance's warning", func() bool { return strings.Contains(logs[1].String(), want) })
	if l := logs[1].String(); !strings.Contains(l, "level=WARN") {
		t.Errorf("second instance's log, want a warning naming the key:\n%s", l)
	}
	if strings.Contains(logs[0].String(), "metrics_addr") {
		t.Errorf("the first instance warns about its metrics:\n%s", logs[0].String())
	}
}

// lockedLog is a process's stderr, read while it is written.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestServeMetricsAndDashboard: with [telemetry] metrics_addr, serve
// answers GET /metrics there (Prometheus text that promtool accepts) and
// not on the MCP port; /dashboard is on the MCP port.
func TestServeMetricsAndDashboard(t *testing.T) {
	maddr := freeAddr(t)
	cfg, _ := writeConfig(t, "\n[telemetry]\nmetrics_addr = \""+maddr+"\"\naudit_log = \"audit.jsonl\"\n")
	base := startHTTP(t, "http", cfg)
	var text string
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + maddr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				text = string(b)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics on %s: %v", maddr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(text, "# TYPE scratchpad_telemetry_spans_dropped_total counter") {
		t.Errorf("metrics:\n%s", text)
	}
	if path, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal("promtool is not installed (Debian package prometheus; scripts/deps.sh)")
	}
	if resp, err := http.Get(base + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("/metrics is served on the MCP port")
		}
	}
	// A rebound name (a page of evil.example resolving to loopback) is
	// refused, as on every other listener.
	req, _ := http.NewRequest("GET", "http://"+maddr+"/metrics", nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || strings.Contains(string(b), "scratchpad_") {
			t.Errorf("Host evil.example: %d %.200s", resp.StatusCode, b)
		}
	}
	resp, err := http.Get(base + "/dashboard")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `<canvas id="kept"`) {
		t.Errorf("/dashboard: %d\n%.300s", resp.StatusCode, page)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cfg), "audit.jsonl")); err != nil {
		t.Errorf("audit log not opened: %v", err)
	}
}

// TestDashboardCommand: the command serves the dashboard of the audit
// log and usage.jsonl on loopback, prints its URL, shows the owner's own
// calls only, refuses a foreign Host and a non-loopback --addr, and -h
// exits 0.
func TestDashboardCommand(t *testing.T) {
	dir := t.TempDir()
	mem := filepath.Join(dir, "mem")
	audit := filepath.Join(dir, "audit.jsonl")
	cfgPath := filepath.Join(dir, "sp.toml")
	if err := os.WriteFile(cfgPath, []byte("memory_dir = \"mem\"\n[telemetry]\naudit_log = \"audit.jsonl\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := telemetry.Open(context.Background(), config.Telemetry{AuditLog: audit}, telemetry.Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p.Audit(telemetry.Record{Time: now, Owner: "team-a", Agent: "w1", Server: "github", Tool: "search", Outcome: "ok", TokensIn: 40000, Diverted: 40000, File: "scratchpad/a.json", BudgetLeft: 150000, BudgetSize: 200000})
	p.Audit(telemetry.Record{Time: now, Owner: "team-b", Agent: "w9", Server: "github", Tool: "search", Outcome: "ok", TokensIn: 9000, Diverted: 9000, File: "scratchpad/b.json"})
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mem, "owners", "team-a"), 0o700); err != nil {
		t.Fatal(err)
	}
	usage := `{"event":"scratchpad_usage","agent_name":"w0","owner":"team-a","tokens_intercepted":7000,"tokens_extracted":100,"calls":3,"time":"2026-12-02T15:00:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(mem, "owners", "team-a", "usage.jsonl"), []byte(usage), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() { done <- serveDashboard(ctx, cfg, "127.0.0.1:0", "team-a", pw, &stderr); pw.Close() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "dashboard: ")
	if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/dashboard") {
		t.Fatalf("printed %q", line)
	}
	resp, err := http.Get(url + "/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard.Data
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if err != nil || d.Kept.Total != 40000 || len(d.Biggest) != 1 || d.Biggest[0].File != "scratchpad/a.json" || len(d.Budgets) != 1 || d.Finished.Intercepted != 7000 {
		t.Errorf("data: %+v %v", d, err)
	}
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = "evil.example:80"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("foreign Host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the dashboard did not stop with its context")
	}

	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"dashboard", "-h"}, 0, "usage: scratchpad-mcp dashboard"},
		{[]string{"dashboard", "--config", cfgPath, "--addr", "0.0.0.0:0"}, 2, "want a loopback host:port"},
		{[]string{"dashboard", "--config", cfgPath, "--owner", "../x"}, 2, "--owner"},
		{[]string{"dashboard", "stray"}, 2, "unexpected argument"},
	} {
		var out strings.Builder
		if code := run(tc.args, nil, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, code, tc.code, tc.out, out.String())
		}
	}
}

// A real Prometheus (Debian package prometheus) scrapes the binary's
// metrics_addr (issue 36): after two diverted calls and one passed
// through, its query API answers the diverted tokens the pointers
// announced and the three tools/call operations.
func TestPrometheusScrapesTheBinary(t *testing.T) {
	maddr := freeAddr(t)
	cfg, _ := writeConfig(t, "\n[telemetry]\nmetrics_addr = \""+maddr+"\"\n")
	base := startHTTP(t, "http", cfg)
	prom := testprom.Start(t, maddr, "spm")
	c := connect(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true})
	defer c.Close()
	waitForTool(t, c, "listing")
	diverted := 0
	for _, n := range []int{100, 200} {
		out := callTool(t, c, "listing", map[string]any{"n": n})
		m := regexp.MustCompile(`([\d,]+) tokens \(threshold`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("listing %d not diverted: %.200s", n, out)
		}
		v, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		diverted += v
	}
	if got := callTool(t, c, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Fatalf("echo: %q", got)
	}
	var tokens, calls string
	testwait.Until(60*time.Second, func() bool {
		tokens = prom.Query(`sum(scratchpad_tokens_diverted_total{job="spm"})`)
		calls = prom.Query(`sum(mcp_server_operation_duration_seconds_count{job="spm",mcp_method_name="tools/call"})`)
		return tokens == strconv.Itoa(diverted) && calls == "3"
	})
	if tokens != strconv.Itoa(diverted) || calls != "3" {
		t.Fatalf("Prometheus answered diverted tokens %q (pointers said %d), tools/call operations %q (want 3)\n%s", tokens, diverted, calls, prom.Logs())
	}
}
