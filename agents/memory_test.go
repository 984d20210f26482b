package agents

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// memoryConfig is a config with the memory tool (on by default), on
// files or (with a URL) on Redis.
func memoryConfig(t *testing.T, redisURL, scope string) *config.Config {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Memory.Scope = scope
	if redisURL != "" {
		cfg.Pad.Backend = config.BackendRedis
		cfg.Pad.RedisURL = redisURL
	}
	return cfg
}

// toolNames lists what an agent of identity id is offered, in order.
func toolNames(r *Registry, id Identity) string {
	var names []string
	for _, d := range r.OwnTools(id) {
		names = append(names, d.Name)
	}
	return strings.Join(names, ",")
}

// The memory tool is offered by default, after the pad's, under its
// [agent.scratchpad] memory_tool, and per worker under the worker's own:
// renamed, or not at all (""), an agent with none has no /memories. The
// server reserves every name, so no upstream tool takes one.
func TestMemoryToolOffered(t *testing.T) {
	on := newRegistry(t, memoryConfig(t, "", config.ScopeAgent))
	if names := toolNames(on, Identity{Agent: "main"}); !strings.Contains(names, "append_scratchpad,memory") {
		t.Errorf("tools %v: want memory after the pad's", names)
	}
	if tools, _, _ := on.Reserved(); !strings.Contains(strings.Join(tools, ","), "memory") {
		t.Errorf("reserved %v lacks memory", tools)
	}

	cfg := memoryConfig(t, "", config.ScopeAgent)
	cfg.Agent.Scratchpad.MemoryTool = ""
	none, mine := "", "scratchpad_memory"
	cfg.Orchestration.Workers["renamed"] = config.Worker{Name: "renamed", Scratchpad: config.ScratchpadOverride{MemoryTool: &mine}}
	cfg.Orchestration.Workers["quiet"] = config.Worker{Name: "quiet", Scratchpad: config.ScratchpadOverride{MemoryTool: &none}}
	r := newRegistry(t, cfg)
	for _, tc := range []struct {
		agent, want string
	}{{"main", ""}, {"quiet", ""}, {"renamed", "scratchpad_memory"}} {
		names := toolNames(r, Identity{Agent: tc.agent, Run: "r1", Role: RoleWorker, Iteration: 1})
		got := ""
		for _, n := range strings.Split(names, ",") {
			if strings.Contains(n, "memory") {
				got += n
			}
		}
		if got != tc.want {
			t.Errorf("%s is offered %q (%s), want %q", tc.agent, got, names, tc.want)
		}
	}
	if tools, _, _ := r.Reserved(); !slices.Contains(tools, "scratchpad_memory") || slices.Contains(tools, "memory") {
		t.Errorf("reserved %v: want scratchpad_memory (a worker's), not memory (nobody's)", tools)
	}
	renamed := Identity{Agent: "renamed", Run: "r1", Role: RoleWorker, Iteration: 1}
	if text, isErr := callTool(t, r, "s1", renamed, "scratchpad_memory", map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "a"}); isErr {
		t.Fatal(text)
	}
	ag, err := r.Resolve(sessionCtx(t, r, "s2", Identity{Agent: "main"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Memory(); err == nil || ag.MemoryDir != "" {
		t.Errorf("an agent with no memory tool has /memories at %q (%v)", ag.MemoryDir, err)
	}
}

// Whose /memories an agent sees: with scope "agent" its own (its name's,
// in a run or not), with scope "run" its run's (shared by the run's
// agents; outside a run its own), always under its owner, on files and
// on Redis.
func TestMemoryScopes(t *testing.T) {
	srv := testredis.Start(t)
	for _, backend := range []string{"file", "redis"} {
		for _, scope := range []string{config.ScopeAgent, config.ScopeRun} {
			t.Run(backend+"/"+scope, func(t *testing.T) {
				url := ""
				if backend == "redis" {
					url = srv.URL()
				}
				cfg := memoryConfig(t, url, scope)
				cfg.Pad.RedisPrefix = "sp-" + scope // the subtests share one redis-server
				r := newRegistry(t, cfg)
				w1 := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1}
				w2 := Identity{Agent: "w2", Role: RoleWorker, Run: "r1", Iteration: 1}
				solo := Identity{Agent: "w1"}
				other := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1, Owner: "bob"}
				if text, isErr := callTool(t, r, "s1", w1, "memory", map[string]any{"command": "create", "path": "/memories/w1.md", "file_text": "by w1"}); isErr {
					t.Fatal(text)
				}
				sees := func(sid string, id Identity) bool {
					text, _ := callTool(t, r, sid, id, "memory", map[string]any{"command": "view", "path": "/memories"})
					return strings.Contains(text, "/memories/w1.md")
				}
				if !sees("s1", w1) {
					t.Error("w1 does not see its own file")
				}
				if got := sees("s2", w2); got != (scope == config.ScopeRun) {
					t.Errorf("w2 in the same run sees it: %v", got)
				}
				// The agent's own /memories are its name's, in a run or not
				// (as its own pad is).
				if got := sees("s3", solo); got != (scope == config.ScopeAgent) {
					t.Errorf("the same agent outside the run sees it: %v", got)
				}
				if sees("s4", other) {
					t.Error("another owner's agent of the same names sees it")
				}
			})
		}
	}
}

// What the memory tool writes holds no credential in mask mode, under
// any name: the file (and its versions) stores the mask, and a
// str_replace whose old_str carries the same secret still matches, being
// masked alike.
func TestMemoryWritesMasked(t *testing.T) {
	for _, name := range []string{"memory", "notes"} {
		t.Run(name, func(t *testing.T) { memoryWritesMasked(t, name) })
	}
}

func memoryWritesMasked(t *testing.T, name string) {
	sec := testsecrets.Plant(rand.New(rand.NewPCG(5, 7)), "slack-bot-token")
	cfg := memoryConfig(t, "", config.ScopeAgent)
	cfg.Agent.Scratchpad.MemoryTool = name
	r := newMaskingRegistry(t, cfg)
	id := Identity{Agent: "main"}
	text, isErr := callTool(t, r, "s1", id, name, map[string]any{"command": "create", "path": "/memories/creds.md", "file_text": "token: " + sec.Text + "\n"})
	if isErr || !strings.Contains(text, "masked before writing") {
		t.Fatalf("create: %s", text)
	}
	text, isErr = callTool(t, r, "s1", id, name, map[string]any{"command": "str_replace", "path": "/memories/creds.md", "old_str": "token: " + sec.Text, "new_str": "token: rotated"})
	if isErr || !strings.Contains(text, "token: rotated") {
		t.Fatalf("str_replace with the secret in old_str: %s", text)
	}
	pad := layout.For(cfg.MemoryDir, "").AgentPad("main")
	err := filepath.WalkDir(pad, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), sec.Text) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A live agent's /memories are retention's to keep, whatever pad holds
// them (scope "run" while the pad is the agent's own).
func TestMemoryProtected(t *testing.T) {
	cfg := memoryConfig(t, "", config.ScopeRun)
	r := newRegistry(t, cfg)
	w := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1}
	if text, isErr := callTool(t, r, "s1", w, "memory", map[string]any{"command": "create", "path": "/memories/a/b.md", "file_text": "x"}); isErr {
		t.Fatal(text)
	}
	file := filepath.Join(layout.For(cfg.MemoryDir, "").RunPad("r1"), layout.PadMemoriesDir, "a", layout.TempName("b.md", "1"))
	if !r.Protected(file) {
		t.Errorf("%s not protected while w1 lives", file)
	}
	r.Finish("s1")
	if r.Protected(file) {
		t.Errorf("%s protected after w1 ended", file)
	}
}
