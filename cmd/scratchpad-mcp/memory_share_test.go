package main

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
)

// emptyMemories is the whole answer to viewing a /memories with no file.
const emptyMemories = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories"

// seesNothing checks that c's /memories holds no file: its listing is
// empty, and path is not there, in the words of a path that never was.
func seesNothing(t *testing.T, who string, c *mcp.ClientSession, path string) {
	t.Helper()
	if got, _ := memoryCall(t, c, map[string]any{"command": "view", "path": "/memories"}); got != emptyMemories {
		t.Errorf("%s sees files in /memories:\n%s", who, got)
	}
	got, isErr := memoryCall(t, c, map[string]any{"command": "view", "path": path})
	if want := "The path " + path + " does not exist. Please provide a valid path."; !isErr || got != want {
		t.Errorf("%s viewing %s: %q (isError %v), want %q", who, path, got, isErr, want)
	}
}

// Two agents of one run share the run's /memories ([memory] scope
// "run"), whatever carries them: two stdio processes (--run, --agent)
// and an HTTP server's clients of both eras (X-Scratchpad-Run and
// -Agent; 2025-11-25 with a session, 2026-07-28 without), on one
// memory_dir or one Redis. Each sees the others' writes at once, and
// expected_revision keeps one from overwriting another's; an agent of
// another run, over either transport, sees nothing of it.
func TestMemorySharedWithinRun(t *testing.T) {
	srv := testredis.Start(t)
	for _, backend := range []string{"file", "redis"} {
		t.Run(backend, func(t *testing.T) {
			extra := "\n[memory]\nscope = \"run\"\n"
			if backend == "redis" {
				extra = redisPadConfig(srv.URL()) + "\n[memory]\nscope = \"run\"\n"
			}
			cfg, _ := writeConfig(t, extra)
			stdio := func(run, agent string) *mcp.ClientSession {
				args := []string{"serve", "--config", cfg, "--agent", agent}
				if run != "" {
					args = append(args, "--run", run)
				}
				c := stdioSession(t, nil, binary(t), args...)
				t.Cleanup(func() { c.Close() })
				waitForTool(t, c, "memory")
				return c
			}
			base := startHTTP(t, "http", cfg) + "/mcp"
			hdr := func(run, agent string) map[string]string {
				return map[string]string{"X-Scratchpad-Run": run, "X-Scratchpad-Agent": agent}
			}

			a, b := stdio("r1", "a"), stdio("r1", "b")
			c25 := httpClient(t, base, hdr("r1", "c"))
			c26 := modernClient(t, base, hdr("r1", "d"))
			memorySteps(t, a, []memoryStep{{map[string]any{"command": "create", "path": "/memories/plan.md", "file_text": "1. find the leak\n"}, false,
				[]string{"File created successfully at: /memories/plan.md\n(revision 1)"}}})
			memorySteps(t, b, []memoryStep{
				{map[string]any{"command": "view", "path": "/memories/plan.md"}, false, []string{"     1\t1. find the leak\n(revision 1)"}},
				{map[string]any{"command": "insert", "path": "/memories/plan.md", "insert_line": 1, "insert_text": "2. b: node-3", "expected_revision": 1}, false, []string{"(revision 2)"}},
			})
			memorySteps(t, c25, []memoryStep{
				{map[string]any{"command": "view", "path": "/memories"}, false, []string{"\t/memories/plan.md"}},
				{map[string]any{"command": "str_replace", "path": "/memories/plan.md", "old_str": "node-3", "new_str": "node-3 (c: OOM)", "expected_revision": 2}, false, []string{"(revision 3)"}},
			})
			memorySteps(t, c26, []memoryStep{
				{map[string]any{"command": "view", "path": "/memories/plan.md"}, false, []string{"     2\t2. b: node-3 (c: OOM)\n(revision 3)"}},
				{map[string]any{"command": "rename", "old_path": "/memories/plan.md", "new_path": "/memories/run/plan.md", "expected_revision": 3}, false, []string{"Successfully renamed /memories/plan.md to /memories/run/plan.md"}},
			})
			// A writer that read revision 2 loses to those who wrote since.
			memorySteps(t, b, []memoryStep{
				{map[string]any{"command": "insert", "path": "/memories/run/plan.md", "insert_line": 0, "insert_text": "# stale", "expected_revision": 2}, true,
					[]string{"Error: The file /memories/run/plan.md is at revision 3, not expected_revision 2"}},
			})
			memorySteps(t, a, []memoryStep{
				{map[string]any{"command": "view", "path": "/memories/run/plan.md"}, false, []string{"     1\t1. find the leak\n     2\t2. b: node-3 (c: OOM)\n(revision 3)"}},
			})

			// Another run's agents, of the same names, see nothing.
			seesNothing(t, "stdio agent a of run r2", stdio("r2", "a"), "/memories/run/plan.md")
			seesNothing(t, "2025 agent c of run r2", httpClient(t, base, hdr("r2", "c")), "/memories/run/plan.md")
			seesNothing(t, "2026 agent d of run r2", modernClient(t, base, hdr("r2", "d")), "/memories/run/plan.md")
			// So does an agent outside any run (its own /memories).
			seesNothing(t, "stdio agent a outside a run", stdio("", "a"), "/memories/run/plan.md")
		})
	}
}

// With bearer tokens, two agents of one owner's run share its /memories
// over HTTP in both eras, while another owner's agents of the same run
// and agent names, and the same owner's agents of another run, see
// nothing, and another owner's file of the same path is its own.
func TestMemorySharedWithinOwnersRun(t *testing.T) {
	srv := testredis.Start(t)
	for _, backend := range []string{"file", "redis"} {
		t.Run(backend, func(t *testing.T) {
			extra := "\n[memory]\nscope = \"run\"\n"
			if backend == "redis" {
				extra = redisPadConfig(srv.URL()) + extra
			}
			cfg, _, tok := tenancyConfig(t, extra, "alice", "bob")
			base := startHTTP(t, "http", cfg) + "/mcp"
			as := func(owner, run, agent string, modern bool) *mcp.ClientSession {
				h := map[string]string{"Authorization": "Bearer " + tok[owner], "X-Scratchpad-Run": run, "X-Scratchpad-Agent": agent}
				if modern {
					return modernClient(t, base, h)
				}
				return httpClient(t, base, h)
			}
			alice1, alice2 := as("alice", "r1", "w1", false), as("alice", "r1", "w2", true)
			memorySteps(t, alice1, []memoryStep{{map[string]any{"command": "create", "path": "/memories/found.md", "file_text": "alice-secret-finding\n"}, false, []string{"(revision 1)"}}})
			memorySteps(t, alice2, []memoryStep{
				{map[string]any{"command": "str_replace", "path": "/memories/found.md", "old_str": "finding", "new_str": "finding, confirmed", "expected_revision": 1}, false, []string{"(revision 2)"}},
			})
			memorySteps(t, alice1, []memoryStep{{map[string]any{"command": "view", "path": "/memories/found.md"}, false, []string{"alice-secret-finding, confirmed\n(revision 2)"}}})

			for _, who := range []struct {
				name              string
				owner, run, agent string
				modern            bool
			}{
				{"bob's w1 of r1 (2025)", "bob", "r1", "w1", false},
				{"bob's w2 of r1 (2026)", "bob", "r1", "w2", true},
				{"alice's w1 of r2 (2025)", "alice", "r2", "w1", false},
				{"alice's w2 of r2 (2026)", "alice", "r2", "w2", true},
			} {
				seesNothing(t, who.name, as(who.owner, who.run, who.agent, who.modern), "/memories/found.md")
			}
			// bob's file of the same path is bob's, from revision 1, and
			// leaves alice's as it was.
			bob := as("bob", "r1", "w1", true)
			memorySteps(t, bob, []memoryStep{{map[string]any{"command": "create", "path": "/memories/found.md", "file_text": "bob's\n"}, false, []string{"(revision 1)"}}})
			memorySteps(t, alice2, []memoryStep{{map[string]any{"command": "view", "path": "/memories/found.md"}, false, []string{"alice-secret-finding, confirmed\n(revision 2)"}}})
		})
	}
}

// config refuses a memory_tool that is another own tool's name: its list
// of those names is every own tool the server offers in any mode (the
// memory tool aside), so a new own tool must be added to it.
func TestOwnToolNamesKnownToConfig(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Agent.Scratchpad.MemoryTool = ""
	reg, err := agents.NewRegistry(agents.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	own := []string{proxy.SearchToolName, proxy.CallToolName}
	for _, d := range reg.OwnTools(agents.Identity{Role: agents.RoleCoordinator}) {
		own = append(own, d.Name)
	}
	known := config.OwnToolNames()
	slices.Sort(own)
	slices.Sort(known)
	if !slices.Equal(own, known) {
		t.Errorf("own tools %v; config knows %v", own, known)
	}
	if slices.Contains(known, config.DefaultMemoryTool) {
		t.Errorf("config refuses %q", config.DefaultMemoryTool)
	}
}
