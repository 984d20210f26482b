package agents

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// plant makes the name rel under mem a symbolic link to target, creating
// its parent folders (0700) first.
func plant(t *testing.T, mem, rel, target string) {
	t.Helper()
	p := filepath.Join(mem, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

// listTree lists every name under dir, relative and slash-separated.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// callTool calls the session's own tool name with args, as a client would.
func callTool(t *testing.T, r *Registry, sid string, id Identity, name string, args map[string]any) (string, bool) {
	t.Helper()
	s, err := r.SessionFor(sid, id)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	for _, d := range s.Tools {
		if d.Name == name {
			res := d.Handler(s.Context(context.Background(), nil), raw)
			return res.Text, res.IsError
		}
	}
	t.Fatalf("session of %+v has no tool %s", id, name)
	return "", false
}

// Every write under memory_dir stays in it: a symbolic link planted inside
// (a run's folder, its artifacts/, an agent's pad/, .history, scratchpad/,
// or a file link at a final name) pointing outside makes the call fail
// with an error the model can read, and nothing is created, written or
// removed outside.
func TestWritesConfinedToMemoryDir(t *testing.T) {
	coord := Identity{Agent: "coord", Role: RoleCoordinator, Run: "r1"}
	worker := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1}
	main := Identity{Agent: "main"}
	research := Identity{Agent: "research"}
	artifact := map[string]any{"filename": "x.md", "content": "# secret plan"}
	note := map[string]any{"note": "a finding"}
	patch := map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "find the bug"}}}

	tests := []struct {
		name    string
		scope   string
		id      Identity
		link    string // planted under memory_dir
		file    bool   // the link is to a file outside (that need not exist), not to the outside folder
		prepare func(t *testing.T, r *Registry, mem string)
		tool    string
		args    map[string]any
	}{
		{name: "artifacts folder", id: coord, link: "r1/artifacts", tool: "write_artifact", args: artifact},
		{name: "run folder", id: coord, link: "r1", tool: "write_artifact", args: artifact},
		{name: "run folder, pad", scope: config.ScopeRun, id: worker, link: "r1", tool: "append_scratchpad", args: note},
		{name: "run pad", scope: config.ScopeRun, id: worker, link: "r1/pad", tool: "append_scratchpad", args: note},
		{name: "agent pad", id: research, link: "agents/research/pad", tool: "append_scratchpad", args: note},
		{name: "agent folder", id: research, link: "agents/research", tool: "update_scratchpad", args: patch},
		{name: "main pad", id: main, link: "pad", tool: "update_scratchpad", args: patch},
		{name: "history", id: main, link: "pad/.history", tool: "update_scratchpad", args: patch},
		{name: "ledger file", id: main, link: "pad/entries.jsonl", file: true, tool: "append_scratchpad", args: note},
		{name: "lock file", id: main, link: "pad/.pad.lock", file: true, tool: "update_scratchpad", args: patch},
		{name: "ledger lock file", id: main, link: "pad/.entries.lock", file: true, tool: "append_scratchpad", args: note},
		{name: "scratchpad folder", id: main, link: "scratchpad", tool: "read_scratchpad", args: map[string]any{}},
		{name: "notice file", id: main, link: "pad/.notice", file: true, tool: "read_scratchpad", args: map[string]any{},
			prepare: func(t *testing.T, _ *Registry, mem string) {
				// A pad file that does not parse: the read quarantines it
				// and leaves a notice.
				if err := os.WriteFile(filepath.Join(mem, "pad", "pad.md"), []byte("text before any heading\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := filepath.Join(t.TempDir(), "outside")
			if err := os.MkdirAll(outside, 0o700); err != nil {
				t.Fatal(err)
			}
			target := outside
			if tt.file {
				target = filepath.Join(outside, "victim")
			}
			plant(t, mem, tt.link, target)
			cfg := config.Default()
			cfg.MemoryDir = mem
			if tt.scope != "" {
				cfg.Pad.Scope = tt.scope
			}
			r := newRegistry(t, cfg)
			if tt.prepare != nil {
				tt.prepare(t, r, mem)
			}
			text, isErr := callTool(t, r, "s1", tt.id, tt.tool, tt.args)
			if got := listTree(t, outside); len(got) > 0 {
				t.Errorf("%s wrote outside memory_dir: %v (answer %s)", tt.tool, got, text)
			}
			if !strings.Contains(text, "outside memory_dir") {
				t.Errorf("%s through a planted link did not say why it failed: %v %s", tt.tool, isErr, text)
			}
			if strings.Contains(text, outside) {
				t.Errorf("the answer names the link's target: %s", text)
			}
		})
	}
}

// What the exploration tools read stays in memory_dir too: a planted
// scratchpad/ (a single agent's read root) or run folder leading outside
// refuses the agent rather than serving what is there.
func TestReadRootConfined(t *testing.T) {
	for _, tt := range []struct {
		id   Identity
		link string
		file string
	}{
		{Identity{Agent: "main"}, layout.ScratchpadDir, "secret.txt"},
		{Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1}, "r1", "iteration-1/scratchpad/secret.txt"},
	} {
		t.Run(tt.link, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := t.TempDir()
			secret := filepath.Join(outside, filepath.FromSlash(tt.file))
			os.MkdirAll(filepath.Dir(secret), 0o700)
			if err := os.WriteFile(secret, []byte("the secret outside\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			plant(t, mem, tt.link, outside)
			cfg := config.Default()
			cfg.MemoryDir = mem
			r := newRegistry(t, cfg)
			text, _ := callTool(t, r, "s1", tt.id, "head", map[string]any{"file": "secret.txt"})
			if strings.Contains(text, "the secret outside") {
				t.Errorf("head read outside memory_dir: %s", text)
			}
		})
	}
}

// Diverted outputs stay in memory_dir: a planted scratchpad/ (or a run's
// iteration folder) leading outside fails the save, and nothing is written
// there.
func TestDivertConfinedToMemoryDir(t *testing.T) {
	for _, tt := range []struct {
		name string
		id   Identity
		link string
	}{
		{"scratchpad", Identity{Agent: "main"}, layout.ScratchpadDir},
		{"iteration", Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2}, "r1/iteration-2"},
		{"run scratchpad", Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2}, "r1/iteration-2/scratchpad"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := t.TempDir()
			plant(t, mem, tt.link, outside)
			cfg := config.Default()
			cfg.MemoryDir = mem
			r := newRegistry(t, cfg)
			a, err := r.Resolve(sessionCtx(t, r, "s1", tt.id))
			if err == nil {
				res := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 400) + `"}]}`)
				out, derr := divert.Decide(divert.Call{Server: "s", Tool: "t", Threshold: 10, Result: res}, a.Divert(), divert.Options{})
				if derr != nil || out.Diverted {
					t.Errorf("diverted through a planted link: %v %s", derr, out.Result)
				}
			}
			if got := listTree(t, outside); len(got) > 0 {
				t.Errorf("an output was written outside memory_dir: %v", got)
			}
		})
	}
}

// On Redis the artifacts live in a hash; this host's folder is only a
// cache, and a planted link there is neither written nor removed through.
func TestRedisArtifactsCacheConfined(t *testing.T) {
	srv := testredis.Start(t)
	mem := filepath.Join(t.TempDir(), "mem")
	outside := t.TempDir()
	victim := filepath.Join(outside, "coordinator-x.md")
	if err := os.WriteFile(victim, []byte("not memory_dir's"), 0o600); err != nil {
		t.Fatal(err)
	}
	plant(t, mem, "r1/artifacts", outside)
	cfg := config.Default()
	cfg.MemoryDir = mem
	cfg.Pad.Backend = config.BackendRedis
	cfg.Pad.RedisURL = srv.URL()
	r := newRegistry(t, cfg)
	coord := Identity{Agent: "coord", Role: RoleCoordinator, Run: "r1"}
	text, _ := callTool(t, r, "s1", coord, "write_artifact", map[string]any{"filename": "x.md", "content": strings.Repeat("big ", 50_000)})
	if !strings.Contains(text, `"written":true`) {
		t.Fatalf("write_artifact on Redis: %s", text)
	}
	// Too large to return: the cache copy is refused through the link.
	text, _ = callTool(t, r, "s1", coord, "read_artifact", map[string]any{"filename": "x.md"})
	if got, err := os.ReadFile(victim); err != nil || string(got) != "not memory_dir's" {
		t.Fatalf("the file outside was replaced or removed: %.40q, %v (read answered %.200s)", got, err, text)
	}
	if got := listTree(t, outside); len(got) != 1 {
		t.Errorf("outside memory_dir: %v", got)
	}
}

// Folders and files a write creates are the owner's alone, and a folder an
// older version made 0755 is tightened by the next write.
func TestWriteModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	mem := filepath.Join(t.TempDir(), "mem")
	cfg := config.Default()
	cfg.MemoryDir = mem
	cfg.Pad.Scope = config.ScopeRun
	// As an older version left it: the run's pad 0755, its lock 0644.
	old := filepath.Join(mem, "r0", "pad")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(mem, "r0"), 0o755)
	os.Chmod(old, 0o755)
	if err := os.WriteFile(filepath.Join(old, ".pad.lock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(old, ".pad.lock"), 0o644)
	r := newRegistry(t, cfg)
	coord := Identity{Agent: "coord", Role: RoleCoordinator, Run: "r1", Owner: "alice"}
	w0 := Identity{Agent: "w1", Role: RoleWorker, Run: "r0", Iteration: 1}
	for _, c := range []struct {
		id   Identity
		tool string
		args map[string]any
	}{
		{coord, "write_artifact", map[string]any{"filename": "x.md", "content": "plan"}},
		{coord, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "t"}}}},
		{coord, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "u"}}}},
		{coord, "append_scratchpad", map[string]any{"note": "n"}},
		{w0, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "t"}}}},
	} {
		sid := c.id.Run + c.id.Agent
		if text, isErr := callTool(t, r, sid, c.id, c.tool, c.args); isErr || strings.Contains(text, `"error"`) {
			t.Fatalf("%s: %s", c.tool, text)
		}
	}
	a, err := r.Resolve(sessionCtx(t, r, "div", Identity{Agent: "w2", Role: RoleWorker, Run: "r1", Iteration: 3, Owner: "alice"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := divert.Decide(divert.Call{Server: "s", Tool: "t", Threshold: 10, Result: []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 400) + `"}]}`)},
		a.Divert(), divert.Options{}); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == mem {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if perm := fi.Mode().Perm(); d.IsDir() && perm != 0o700 || !d.IsDir() && perm&0o077 != 0 {
			rel, _ := filepath.Rel(mem, p)
			t.Errorf("%s: mode %v", rel, perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
