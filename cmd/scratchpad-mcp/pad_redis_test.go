package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

// [pad] backend = "redis" through the built binary and the CLI.

func redisPadConfig(url string) string {
	return fmt.Sprintf("\n[pad]\nscope = \"run\"\nbackend = \"redis\"\nredis_url = %q\nredis_prefix = \"e2e\"\n", url)
}

// closedRedisURL names a loopback port nothing listens on, with a
// password that must never be printed.
func closedRedisURL(t *testing.T) (url, password string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "redis://worker:pw-not-for-logs@" + addr + "/0", "pw-not-for-logs"
}

// Two server processes with their own memory_dir (two hosts) and one
// Redis: agents of one run on different processes share the pad, and
// nothing of it is on disk.
func TestRedisPadSharedAcrossServerProcesses(t *testing.T) {
	srv := testredis.Start(t)
	cfgA, memA := writeConfig(t, redisPadConfig(srv.URL()))
	cfgB, memB := writeConfig(t, redisPadConfig(srv.URL()))
	baseA := startHTTP(t, "http", cfgA)
	baseB := startHTTP(t, "http", cfgB)
	alice := httpClient(t, baseA+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "r1"})
	bob := httpClient(t, baseB+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "r1"})
	carol := httpClient(t, baseB+"/mcp", map[string]string{"X-Scratchpad-Agent": "carol", "X-Scratchpad-Run": "r2"})

	for _, step := range []struct {
		who  string
		tool string
		args map[string]any
		want string
	}{
		{"alice", "append_scratchpad", map[string]any{"note": "pods restart every 5 minutes"}, "appended"},
		{"bob", "append_scratchpad", map[string]any{"note": "node-3 is out of memory"}, "appended"},
		{"alice", "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Findings", "op": "append", "content": "alice: the restarts follow OOM kills"}}}, "updated"},
		{"bob", "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Plan", "op": "append", "content": "bob: raise node-3 memory"}}}, "updated"},
	} {
		c := alice
		if step.who == "bob" {
			c = bob
		}
		if out := callTool(t, c, step.tool, step.args); !strings.Contains(out, step.want) {
			t.Fatalf("%s %s: %s", step.who, step.tool, short(out))
		}
	}
	wants := []string{"(alice) pods restart", "(bob) node-3", "alice: the restarts follow OOM kills", "1. [ ] bob: raise node-3 memory"}
	for _, who := range []struct {
		name string
		c    *mcp.ClientSession
	}{{"alice", alice}, {"bob", bob}} {
		out := callTool(t, who.c, "read_scratchpad", map[string]any{})
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s does not see %q:\n%s", who.name, w, short(out))
			}
		}
	}
	if out := callTool(t, carol, "read_scratchpad", map[string]any{}); strings.Contains(out, "node-3") {
		t.Errorf("run r2 sees run r1's pad:\n%s", short(out))
	}
	for _, mem := range []string{memA, memB} {
		if _, err := os.Stat(filepath.Join(mem, "r1", "pad")); !os.IsNotExist(err) {
			t.Errorf("a pad directory was made under %s (stat: %v)", mem, err)
		}
	}

	// The CLI on either host opens the same pad.
	code, out, errOut := runCLI(t, "pad", "show", "--config", cfgB, "--run", "r1")
	if code != 0 || !strings.Contains(out, "alice: the restarts follow OOM kills") || !strings.Contains(out, "(bob) node-3") {
		t.Fatalf("pad show: %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, "pad", "history", "--config", cfgA, "--run", "r1")
	if code != 0 || !strings.Contains(out, "  2  ") || !strings.Contains(out, "(current)") {
		t.Fatalf("pad history: %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "pad", "restore", "2", "--config", cfgA, "--run", "r1")
	if code != 0 || !strings.Contains(out, "-1. [ ] bob: raise node-3 memory") {
		t.Fatalf("pad restore: %d\n%s", code, out)
	}
	if out := callTool(t, bob, "read_scratchpad", map[string]any{}); strings.Contains(out, "bob: raise node-3 memory") {
		t.Errorf("bob still sees the undone change after a restore on the other host:\n%s", short(out))
	}
}

func TestPadCommandRedis(t *testing.T) {
	srv := testredis.Start(t)
	cfg, _ := writeConfig(t, redisPadConfig(srv.URL()))
	// The pad a stdio agent named alice would get (scope run, no run).
	r, err := pad.NewRedis(pad.RedisOptions{URL: srv.URL(), Prefix: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := r.Open("agent:alice", pad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update([]pad.Patch{{Section: "Task", Op: pad.OpReplace, Content: "alice's task"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"pad", "show", "--config", cfg, "--agent", "alice"}, 0, "alice's task"},
		{[]string{"pad", "validate", "--config", cfg, "--agent", "alice"}, 0, "e2e:{agent:alice}:doc: ok; ledger: 0 entries"},
		{[]string{"pad", "diff", "--config", cfg, "--agent", "alice"}, 0, "+alice's task"},
		{[]string{"pad", "show", "--config", cfg}, 0, "## Task\n(empty)"}, // main's pad
		{[]string{"pad", "show", "--config", cfg, "--agent", "../x"}, 2, "agent"},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(out+errOut, tt.contains) {
			t.Errorf("%q: exit %d\n%s%s\nwant exit %d containing %q", tt.args, code, out, errOut, tt.code, tt.contains)
		}
	}
	// On files --agent and --owner name the same pad the server gives.
	fileCfg, mem := writeConfig(t, "")
	fp, err := pad.Open(filepath.Join(mem, "owners", "bob", "agents", "alice", "pad"), pad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fp.Update([]pad.Patch{{Section: "Task", Op: pad.OpReplace, Content: "bob's alice's task"}}); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "pad", "show", "--config", fileCfg, "--agent", "alice", "--owner", "bob"); code != 0 || !strings.Contains(out, "bob's alice's task") {
		t.Errorf("--agent --owner with the file backend: %d %s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "pad", "show", "--config", fileCfg, "--agent", "alice"); code != 0 || strings.Contains(out, "bob's alice's task") {
		t.Errorf("--agent without --owner shows owner bob's pad: %d %s", code, out)
	}
	srv.Kill()
	code, _, errOut := runCLI(t, "pad", "show", "--config", cfg, "--agent", "alice")
	if code != 1 || !strings.Contains(errOut, `pad `+srv.URL()+` agent "alice": read pad.md: `) {
		t.Errorf("show with Redis down: %d %s", code, errOut)
	}
}

// serve and doctor reach Redis at start-up and say which key is wrong,
// without the password.
func TestRedisUnreachableAtStart(t *testing.T) {
	url, pw := closedRedisURL(t)
	cfg, _ := writeConfig(t, redisPadConfig(url))
	redacted := strings.Replace(url, pw, "xxxxx", 1)

	out, err := exec.Command(binary(t), "serve", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatal("serve started with Redis unreachable")
	}
	if !strings.Contains(string(out), "[pad] redis_url: cannot reach "+redacted) || strings.Contains(string(out), pw) {
		t.Errorf("serve's error should name the key and the redacted URL:\n%s", out)
	}

	code, stdout, _ := runCLI(t, "doctor", "--config", cfg)
	problems := regexp.MustCompile(`(?m)^problem: .*$`).FindAllString(stdout, -1)
	if code != 1 || len(problems) != 1 || !strings.Contains(problems[0], "[pad] redis_url: cannot reach "+redacted) || strings.Contains(stdout, pw) {
		t.Errorf("doctor: exit %d, problems %q\n%s", code, problems, stdout)
	}
	if !strings.Contains(stdout, "server k8s") {
		t.Errorf("doctor stopped checking after the pad problem:\n%s", stdout)
	}
}

func TestDoctorReachesRedis(t *testing.T) {
	srv := testredis.Start(t)
	cfg, _ := writeConfig(t, redisPadConfig(srv.URL()))
	code, out, errOut := runCLI(t, "doctor", "--config", cfg)
	if code != 0 || !strings.Contains(out, "pad: redis "+srv.URL()+` (prefix "e2e", scope run): reachable`) {
		t.Fatalf("doctor: %d\n%s\n%s", code, out, errOut)
	}
}
