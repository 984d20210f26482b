package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// memoryCall calls the memory tool and returns its text and isError.
func memoryCall(t *testing.T, c *mcp.ClientSession, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "memory", Arguments: args})
	if err != nil {
		t.Fatalf("memory %v: %v", args, err)
	}
	return text(res), res.IsError
}

// memoryStep is one call and what its answer must hold.
type memoryStep struct {
	args    map[string]any
	refused bool
	want    []string
}

func memorySteps(t *testing.T, c *mcp.ClientSession, steps []memoryStep) {
	t.Helper()
	for _, s := range steps {
		got, isErr := memoryCall(t, c, s.args)
		if isErr != s.refused {
			t.Errorf("memory %v: isError %v, want %v: %s", s.args, isErr, s.refused, short(got))
		}
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Errorf("memory %v:\n%s\nwant %q", s.args, short(got), w)
			}
		}
	}
}

// The memory tool through the built binary and go-sdk's client, over
// stdio: listed with its schema, every command answered as the memory
// tool's documentation words it, a write past a bound and a path out of
// /memories refused, the files where the layout puts them; then `pad
// history|restore --memory` on what the model wrote.
func TestMemoryToolEndToEnd(t *testing.T) {
	cfg, mem := writeConfig(t, `
[memory]
max_file_bytes = 300
read_only_paths = ["/memories/policy.md"]
`)
	c := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--agent", "research")
	tools := waitForTool(t, c, "memory")
	for _, tl := range tools {
		if tl.Name == "memory" && !strings.Contains(tl.Description, "/memories") {
			t.Errorf("memory's description: %s", tl.Description)
		}
	}
	memorySteps(t, c, []memoryStep{
		{map[string]any{"command": "view", "path": "/memories"}, false,
			[]string{"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories"}},
		{map[string]any{"command": "create", "path": "/memories/notes/k8s.md", "file_text": "# k8s\n- pods restart every 5 minutes\n"}, false,
			[]string{"File created successfully at: /memories/notes/k8s.md", "(revision 1)"}},
		{map[string]any{"command": "str_replace", "path": "/memories/notes/k8s.md", "old_str": "every 5 minutes", "new_str": "on OOM kills"}, false,
			[]string{"The memory file has been edited.", "     2\t- pods restart on OOM kills", "(revision 2)"}},
		{map[string]any{"command": "str_replace", "path": "/memories/notes/k8s.md", "old_str": "absent", "new_str": "x"}, true,
			[]string{"No replacement was performed, old_str `absent` did not appear verbatim in /memories/notes/k8s.md."}},
		{map[string]any{"command": "insert", "path": "/memories/notes/k8s.md", "insert_line": 2, "insert_text": "- node-3 is out of memory"}, false,
			[]string{"The file /memories/notes/k8s.md has been edited."}},
		{map[string]any{"command": "view", "path": "/memories/notes/k8s.md", "view_range": []int{2, -1}}, false,
			[]string{"Here's the content of /memories/notes/k8s.md with line numbers:\n     2\t- pods restart on OOM kills\n     3\t- node-3 is out of memory\n(revision 3)"}},
		{map[string]any{"command": "create", "path": "/memories/big.md", "file_text": strings.Repeat("x", 301)}, true,
			[]string{"over the limit of 300 bytes per file (max_file_bytes)"}},
		{map[string]any{"command": "view", "path": "/memories/../../pad/pad.md"}, true, []string{"contains .."}},
		{map[string]any{"command": "create", "path": "/etc/cron.d/x", "file_text": "x"}, true, []string{"outside /memories"}},
		{map[string]any{"command": "create", "path": "/memories/policy.md", "file_text": "x"}, true, []string{"read-only"}},
		{map[string]any{"command": "rename", "old_path": "/memories/notes", "new_path": "/memories/archive/notes"}, false,
			[]string{"Successfully renamed /memories/notes to /memories/archive/notes"}},
		{map[string]any{"command": "view", "path": "/memories"}, false, []string{"\t/memories/archive/\n", "\t/memories/archive/notes/"}},
		{map[string]any{"command": "delete", "path": "/memories/archive"}, false, []string{"Successfully deleted /memories/archive"}},
		{map[string]any{"command": "list"}, true, []string{"Unrecognized command"}},
	})
	// The agent's own pad holds its /memories (scope "agent", [pad]'s);
	// a deleted folder leaves nothing behind.
	if entries, err := os.ReadDir(filepath.Join(mem, "agents", "research", "pad", "memories")); err != nil || len(entries) != 0 {
		t.Errorf("memories/ after the last delete: %v %v", entries, err)
	}
	if entries, err := os.ReadDir(filepath.Join(mem, "agents", "research", "pad", ".history", "memories")); err != nil || len(entries) != 1 {
		t.Errorf("versions of the one file written: %v %v", entries, err)
	}

	// The operator brings the deleted file back.
	path := "/memories/archive/notes/k8s.md"
	code, out, errOut := runCLI(t, "pad", "history", "--memory", path, "--config", cfg, "--agent", "research")
	if code != 0 || !strings.Contains(out, path+" (deleted)") || strings.Count(out, "\n") != 5 {
		t.Fatalf("pad history --memory: %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "pad", "restore", "2", "--memory", path, "--config", cfg, "--agent", "research"); code != 0 || !strings.Contains(out, "as revision 4") {
		t.Fatalf("pad restore --memory: %d %s%s", code, out, errOut)
	}
	memorySteps(t, c, []memoryStep{{map[string]any{"command": "view", "path": path}, false,
		[]string{"     2\t- pods restart on OOM kills\n(revision 4)"}}})
	// pad show ends with the /memories listing the model sees.
	code, out, errOut = runCLI(t, "pad", "show", "--config", cfg, "--agent", "research")
	if want := "\n\nHere're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"; code != 0 || !strings.Contains(out, want) || !strings.HasSuffix(out, "\t/memories/archive/notes/\n") {
		t.Errorf("pad show: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "pad", "show", "--render", "json", "--config", cfg, "--agent", "research"); code != 0 || strings.Contains(out, "/memories") || !json.Valid([]byte(out)) {
		t.Errorf("pad show --render json: %d\n%s", code, out)
	}
}

// Two server processes (two hosts) on one Redis, [memory] scope "run":
// agents of one run on either process share the run's /memories, and a
// stale expected_revision loses the compare-and-swap; nothing of it is
// on either host's disk, and the CLI reads its versions from Redis.
func TestMemoryToolRedisAcrossProcesses(t *testing.T) {
	srv := testredis.Start(t)
	extra := redisPadConfig(srv.URL()) + "\n[memory]\nscope = \"run\"\n"
	cfgA, memA := writeConfig(t, extra)
	cfgB, memB := writeConfig(t, extra)
	alice := httpClient(t, startHTTP(t, "http", cfgA)+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "r1"})
	bob := httpClient(t, startHTTP(t, "http", cfgB)+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "r1"})
	carol := httpClient(t, startHTTP(t, "http", cfgB)+"/mcp", map[string]string{"X-Scratchpad-Agent": "carol", "X-Scratchpad-Run": "r2"})

	memorySteps(t, alice, []memoryStep{{map[string]any{"command": "create", "path": "/memories/plan.md", "file_text": "1. find the leak\n"}, false, []string{"(revision 1)"}}})
	memorySteps(t, bob, []memoryStep{
		{map[string]any{"command": "view", "path": "/memories/plan.md"}, false, []string{"     1\t1. find the leak\n(revision 1)"}},
		{map[string]any{"command": "insert", "path": "/memories/plan.md", "insert_line": 1, "insert_text": "2. bob: fix node-3", "expected_revision": 1}, false, []string{"(revision 2)"}},
	})
	memorySteps(t, alice, []memoryStep{
		{map[string]any{"command": "insert", "path": "/memories/plan.md", "insert_line": 1, "insert_text": "2. alice: fix node-3", "expected_revision": 1}, true,
			[]string{"is at revision 2, not expected_revision 1"}},
		{map[string]any{"command": "view", "path": "/memories/plan.md"}, false, []string{"2. bob: fix node-3\n(revision 2)"}},
	})
	memorySteps(t, carol, []memoryStep{{map[string]any{"command": "view", "path": "/memories/plan.md"}, true, []string{"does not exist"}}})
	for _, m := range []string{memA, memB} {
		if _, err := os.Stat(filepath.Join(m, "r1", "pad", "memories")); !os.IsNotExist(err) {
			t.Errorf("memory files on disk at %s: %v", m, err)
		}
	}
	code, out, errOut := runCLI(t, "pad", "history", "--memory", "/memories/plan.md", "--config", cfgA, "--run", "r1")
	if code != 0 || !strings.Contains(out, "(current)") || strings.Count(out, "\n") != 4 {
		t.Fatalf("pad history --memory on Redis: %d\n%s%s", code, out, errOut)
	}
	if code, out, _ := runCLI(t, "pad", "diff", "--memory", "/memories/plan.md", "--config", cfgA, "--run", "r1"); code != 0 || !strings.Contains(out, "+2. bob: fix node-3") {
		t.Fatalf("pad diff --memory on Redis: %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "pad", "show", "--config", cfgA, "--run", "r1"); code != 0 || !strings.HasSuffix(out, "\t/memories/plan.md\n") {
		t.Fatalf("pad show on Redis: %d\n%s", code, out)
	}
}

// [agent.scratchpad] memory_tool names the tool the binary lists (a
// worker's table its own, "" none), and a file that still says [memory]
// enabled = false lists none: serve logs that the key is deprecated, and
// doctor prints it, with file and line.
func TestMemoryToolNamedByConfig(t *testing.T) {
	cfg, _ := writeConfig(t, `
[orchestration.worker.reviewer.scratchpad]
memory_tool = ""

[orchestration.worker.notetaker.scratchpad]
memory_tool = "scratchpad_memory"
`)
	base := startHTTP(t, "http", cfg) + "/mcp"
	for agent, want := range map[string]string{"main": "memory", "reviewer": "", "notetaker": "scratchpad_memory"} {
		c := httpClient(t, base, map[string]string{"X-Scratchpad-Agent": agent})
		got := ""
		for _, tl := range waitForTool(t, c, "read_scratchpad") {
			if tl.Name == "memory" || tl.Name == "scratchpad_memory" {
				got += tl.Name
			}
		}
		if got != want {
			t.Errorf("agent %s is offered %q, want %q", agent, got, want)
		}
		if want != "" {
			if out := callTool(t, c, want, map[string]any{"command": "view", "path": "/memories"}); out != emptyMemories {
				t.Errorf("agent %s's %s: %s", agent, want, out)
			}
		}
	}

	old, _ := writeConfig(t, "\n[memory]\nenabled = false\n")
	var log serverLog
	c := httpClient(t, startHTTPLogged(t, "http", old, &log)+"/mcp", map[string]string{"X-Scratchpad-Agent": "main"})
	for _, tl := range waitForTool(t, c, "read_scratchpad") {
		if tl.Name == "memory" {
			t.Error("memory listed with [memory] enabled = false")
		}
	}
	if line := log.wait(t, 10*time.Second, func(l string) bool { return strings.Contains(l, "memory.enabled: deprecated") }); !strings.Contains(line, "WARN") || !strings.Contains(line, "scratchpad.toml:19:1: memory.enabled") {
		t.Errorf("serve's log of the deprecated key: %q\n%s", line, log.tail(20))
	}
	if code, out, errOut := runCLI(t, "doctor", "--config", old); !strings.Contains(out, "WARNING: "+old+":19:1: memory.enabled: deprecated: write memory_tool = \"\" in [agent.scratchpad] instead") {
		t.Errorf("doctor: %d\n%s%s", code, out, errOut)
	}
}
