package agents

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/appview"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// The view's tools (package appview) as an agent's session runs them:
// view_page's answers reach the person, so they are not charged to the
// model's context budget but are masked as an exploration answer is;
// the model's view call is charged; both read the agent's read root
// only, and an output another agent's scratchpad holds is not found.
func TestViewTools(t *testing.T) {
	pat := testsecrets.Plant(rand.New(rand.NewPCG(5, 5)), "github-pat")
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	r := newMaskingRegistry(t, cfg)
	id := Identity{Agent: "main", Run: "run-1", Iteration: 0, Role: RoleWorker}
	other := Identity{Agent: "w2", Run: "run-1", Iteration: 1, Role: RoleWorker}
	ag, err := r.Resolve(sessionCtx(t, r, "s1", id))
	if err != nil {
		t.Fatal(err)
	}
	ag2, err := r.Resolve(sessionCtx(t, r, "s2", other))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"items": []any{map[string]any{"name": "a", "token": pat.Text}, map[string]any{"name": "b"}}})
	for dir, name := range map[string]string{ag.ScratchpadDir: "k8s-get-00000001.json", ag2.ScratchpadDir: "k8s-get-00000002.json"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		charged bool
		want    string
	}{
		{"a page is not charged, and masked", appview.ToolPage, map[string]any{"file": "k8s-get-00000001.json", "mode": "items", "path": "$.items"}, false, `"total":2`},
		{"the model's call is charged", appview.ToolView, map[string]any{"file": "k8s-get-00000001.json"}, true, "can now see"},
		{"another agent's output is not there", appview.ToolPage, map[string]any{"file": "k8s-get-00000002.json", "mode": "lines"}, false, "file_not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ag.Budget.Used()
			text, isErr := callTool(t, r, "s1", id, tc.tool, tc.args)
			if isErr || !strings.Contains(text, tc.want) {
				t.Fatalf("%s: %v %s", tc.tool, isErr, text)
			}
			if strings.Contains(text, pat.Text) {
				t.Errorf("the credential is shown: %s", text)
			}
			if charged := ag.Budget.Used() > before; charged != tc.charged {
				t.Errorf("charged %v (%d -> %d), want %v", charged, before, ag.Budget.Used(), tc.charged)
			}
		})
	}
}
