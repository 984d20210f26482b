package artifacts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
)

// TestPointerWorksWithExplore follows read_artifact's too-large pointer
// with the real exploration tools, set up as a worker's session is: read
// root {run}, file arguments resolved from iteration-{n}/scratchpad.
func TestPointerWorksWithExplore(t *testing.T) {
	s, mem := runStore(t)
	if _, err := s.Write("big.md", strings.Repeat("line of text\n", 5000)); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(mem, "run-1")
	if err := os.MkdirAll(filepath.Join(runDir, "iteration-1", "scratchpad"), 0o700); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(runDir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	agent := budget.NewAgent(budget.Identity{}, 5000, 0)
	c := newSession(t, &Env{Store: s, RunID: "run-1", Role: "worker", Budget: agent, Count: words})
	m := decode(t, call(t, c, ToolRead, map[string]any{"filename": "big.md"}))
	if m["error"] != "read_artifact_too_large" {
		t.Fatalf("expected a pointer: %v", m)
	}
	for _, sg := range m["suggestions"].([]any) {
		sg := sg.(map[string]any)
		env := &explore.Env{Root: root, Dir: "iteration-1/scratchpad", Count: words, Budget: agent}
		res := explore.Call(context.Background(), env, sg["tool"].(string), sg["arguments"].(map[string]any))
		text := res.Text
		if strings.HasPrefix(text, `{"error"`) {
			t.Errorf("suggested %v failed: %s", sg, text)
		}
	}
}
