package agents

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// memoryConfig is a config with the memory tool on, on files or (with a
// URL) on Redis.
func memoryConfig(t *testing.T, redisURL, scope string) *config.Config {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Memory.Enabled = true
	cfg.Memory.Scope = scope
	if redisURL != "" {
		cfg.Pad.Backend = config.BackendRedis
		cfg.Pad.RedisURL = redisURL
	}
	return cfg
}

// The memory tool is offered only when [memory] enables it, beside the
// pad's tools.
func TestMemoryToolOffered(t *testing.T) {
	off := newRegistry(t, func() *config.Config { c := config.Default(); c.MemoryDir = t.TempDir(); return c }())
	for _, d := range off.OwnTools(Identity{Agent: "main"}) {
		if d.Name == "memory" {
			t.Fatal("memory offered with [memory] off")
		}
	}
	on := newRegistry(t, memoryConfig(t, "", config.ScopeAgent))
	var names []string
	for _, d := range on.OwnTools(Identity{Agent: "main"}) {
		names = append(names, d.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "append_scratchpad,memory") {
		t.Errorf("tools %v: want memory after the pad's", names)
	}
	if tools, _, _ := on.Reserved(); !strings.Contains(strings.Join(tools, ","), "memory") {
		t.Errorf("reserved %v lacks memory", tools)
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

// What the memory tool writes holds no credential in mask mode: the
// file (and its versions) stores the mask, and a str_replace whose
// old_str carries the same secret still matches, being masked alike.
func TestMemoryWritesMasked(t *testing.T) {
	sec := testsecrets.Plant(rand.New(rand.NewPCG(5, 7)), "slack-bot-token")
	cfg := memoryConfig(t, "", config.ScopeAgent)
	red, err := redact.New(redact.Options{Mode: redact.Mask})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Options{Config: cfg, Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	id := Identity{Agent: "main"}
	text, isErr := callTool(t, r, "s1", id, "memory", map[string]any{"command": "create", "path": "/memories/creds.md", "file_text": "token: " + sec.Text + "\n"})
	if isErr || !strings.Contains(text, "masked before writing") {
		t.Fatalf("create: %s", text)
	}
	text, isErr = callTool(t, r, "s1", id, "memory", map[string]any{"command": "str_replace", "path": "/memories/creds.md", "old_str": "token: " + sec.Text, "new_str": "token: rotated"})
	if isErr || !strings.Contains(text, "token: rotated") {
		t.Fatalf("str_replace with the secret in old_str: %s", text)
	}
	pad := layout.For(cfg.MemoryDir, "").AgentPad("main")
	err = filepath.WalkDir(pad, func(p string, d os.DirEntry, err error) error {
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
