//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/retention"
)

// killWriteConfig: the test upstream, a coordinator of run r1 (so it may
// write artifacts) and a pad section without a cap (big updates).
func killWriteConfig(t *testing.T) (cfg, mem string) {
	t.Helper()
	dir := t.TempDir()
	mem = filepath.Join(dir, "mem")
	body := fmt.Sprintf(`memory_dir = %q

[agent]
model = "gpt-4o"
context_window = 100000000

[agent.scratchpad]
max_extraction_tokens = 100000000

[mcp.servers.k8s]
cmd = [%q]
env = { SCRATCHPAD_TESTUPSTREAM = "stdio" }

[mcp.servers.k8s.scratchpad]
"listing" = 1000

[[pad.sections]]
name = "Notes"
cap = 0
`, mem, upstreamCmd())
	cfg = filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg, mem
}

// proxyProc is the real binary serving over stdio, as a client spawns it.
type proxyProc struct {
	cmd *exec.Cmd
	c   *mcp.ClientSession
}

func startProxy(t *testing.T, cfg string) *proxyProc {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--role", "coordinator", "--run", "r1")
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	p := &proxyProc{cmd: cmd, c: connect(t, &mcp.CommandTransport{Command: cmd})}
	t.Cleanup(func() { _ = cmd.Process.Kill(); p.c.Close() })
	return p
}

// temps lists the temporary files of interrupted writes under dir.
func temps(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && layout.IsTemp(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// killDuring starts call in the background and SIGKILLs the proxy as
// soon as a temporary file shows up in dir: in the middle of the write.
// It reports whether the kill landed there (a temporary file outlived
// the process).
func killDuring(t *testing.T, p *proxyProc, dir string, call func(context.Context)) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go call(ctx)
	deadline := time.Now().Add(90 * time.Second) // -race: the 50 MB listing is slow to make
	for len(temps(dir)) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	// The transport's Close reaps the process (only it may Wait).
	_ = p.c.Close()
	return len(temps(dir)) > 0
}

// SIGKILL during a 50 MB divert, a pad update and an artifact write: the
// previous versions are intact, no tool shows a temporary file, and the
// next start removes the leftovers.
func TestKillDuringWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 50 MB through the proxy")
	}
	cfg, mem := killWriteConfig(t)
	scratch := filepath.Join(mem, "r1", "iteration-0", "scratchpad")
	artDir := filepath.Join(mem, "r1", "artifacts")
	padDir := filepath.Join(mem, "pad")

	// The previous versions.
	p := startProxy(t, cfg)
	waitForTool(t, p.c, "listing")
	if out := callTool(t, p.c, "listing", map[string]any{"n": 200}); !strings.Contains(out, "diverted") {
		t.Fatalf("small listing not diverted: %s", short(out))
	}
	prevOutputs := map[string][]byte{}
	ents, _ := os.ReadDir(scratch)
	for _, e := range ents {
		prevOutputs[e.Name()] = mustRead(t, filepath.Join(scratch, e.Name()))
	}
	if len(prevOutputs) != 1 {
		t.Fatalf("%d stored outputs, want 1", len(prevOutputs))
	}
	if out := callTool(t, p.c, "write_artifact", map[string]any{"filename": "plan.md", "content": "# Plan v1\n"}); !strings.Contains(out, `"written":true`) {
		t.Fatalf("write_artifact: %s", out)
	}
	callTool(t, p.c, "update_scratchpad", map[string]any{"patches": []any{map[string]any{"section": "Notes", "op": "replace", "content": "notes v1"}}})
	prevArt := mustRead(t, filepath.Join(artDir, "coordinator-plan.md"))
	prevPad := mustRead(t, filepath.Join(padDir, "pad.md"))
	if !bytes.Contains(prevPad, []byte("notes v1")) {
		t.Fatalf("pad.md:\n%s", prevPad)
	}

	// 240,000 pods: 52 MB from the upstream, more once indented.
	// 12 MB for the artifact and the pad: a request over stdio is one
	// line, and go-sdk's stdio transport reads lines up to 16 MiB.
	big := strings.Repeat("0123456789abcdef ", 12<<20/17)
	cases := []struct {
		name string
		dir  string
		call func(c *mcp.ClientSession) func(context.Context)
	}{
		{"divert 50 MB", scratch, func(c *mcp.ClientSession) func(context.Context) {
			return func(ctx context.Context) {
				_, _ = c.CallTool(ctx, &mcp.CallToolParams{Name: "listing", Arguments: map[string]any{"n": 240000}})
			}
		}},
		{"artifact write", artDir, func(c *mcp.ClientSession) func(context.Context) {
			return func(ctx context.Context) {
				_, _ = c.CallTool(ctx, &mcp.CallToolParams{Name: "write_artifact", Arguments: map[string]any{"filename": "plan.md", "content": big}})
			}
		}},
		{"pad update", padDir, func(c *mcp.ClientSession) func(context.Context) {
			return func(ctx context.Context) {
				_, _ = c.CallTool(ctx, &mcp.CallToolParams{Name: "update_scratchpad", Arguments: map[string]any{
					"patches": []any{map[string]any{"section": "Notes", "op": "replace", "content": big}}}})
			}
		}},
	}
	_ = p.cmd.Process.Kill()
	_ = p.c.Close()
	for _, tc := range cases {
		landed := false
		for attempt := 0; attempt < 3 && !landed; attempt++ {
			p := startProxy(t, cfg)
			waitForTool(t, p.c, "listing")
			landed = killDuring(t, p, tc.dir, tc.call(p.c))
		}
		if !landed {
			t.Fatalf("%s: no kill landed during the write in 3 attempts", tc.name)
		}
		t.Logf("%s: killed mid-write, leftover %v", tc.name, relAll(mem, temps(mem)))
	}

	// The previous versions are intact; a file that did land is whole.
	for name, b := range prevOutputs {
		if !bytes.Equal(mustRead(t, filepath.Join(scratch, name)), b) {
			t.Errorf("stored output %s changed", name)
		}
	}
	ents, _ = os.ReadDir(scratch)
	for _, e := range ents {
		if _, ok := prevOutputs[e.Name()]; ok || layout.IsTemp(e.Name()) {
			continue
		}
		if !json.Valid(mustRead(t, filepath.Join(scratch, e.Name()))) {
			t.Errorf("stored output %s is not whole", e.Name())
		}
	}
	if b := mustRead(t, filepath.Join(artDir, "coordinator-plan.md")); !bytes.Equal(b, prevArt) && string(b) != big {
		t.Errorf("plan.md is neither version (%d bytes)", len(b))
	}
	if b := mustRead(t, filepath.Join(padDir, "pad.md")); !bytes.Equal(b, prevPad) && !bytes.Contains(b, []byte(big)) {
		t.Errorf("pad.md is neither version (%d bytes)", len(b))
	}
	left := temps(mem)
	if len(left) == 0 {
		t.Fatal("no leftovers to clean")
	}

	// The next start. A leftover younger than a minute may be another
	// process's write in flight; these are a minute old by now, as far
	// as the sweep can tell.
	old := time.Now().Add(-2 * retention.DefaultTempGrace)
	for _, f := range left {
		_ = os.Chtimes(f, old, old)
	}
	p = startProxy(t, cfg)
	arts := callTool(t, p.c, "list_artifacts", nil)
	if strings.Contains(arts, ".tmp-") || !strings.Contains(arts, "plan.md") {
		t.Errorf("list_artifacts: %s", short(arts))
	}
	padText := callTool(t, p.c, "read_scratchpad", nil)
	if !strings.Contains(padText, "notes v1") && !strings.Contains(padText, big[:100]) {
		t.Errorf("read_scratchpad: %s", short(padText))
	}
	if out := callTool(t, p.c, "read_artifact", map[string]any{"filename": filepath.Base(tempIn(left, artDir))}); !strings.Contains(out, `"found":false`) {
		t.Errorf("read_artifact of a temporary file: %s", short(out))
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(temps(mem)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if l := temps(mem); len(l) > 0 {
		t.Fatalf("the next start left %v", relAll(mem, l))
	}
}

func tempIn(files []string, dir string) string {
	for _, f := range files {
		if filepath.Dir(f) == dir {
			return f
		}
	}
	return filepath.Join(dir, ".tmp-none")
}

func relAll(base string, ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i], _ = filepath.Rel(base, p)
	}
	return out
}
