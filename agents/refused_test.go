package agents

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// An exploration call refused by the context budget is counted as a
// refusal of kind "budget" (issue 36), one per refused call; a call that
// fits is not.
func TestBudgetRefusalCounted(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Agent.ContextWindow = 6000
	cfg.Agent.Scratchpad.ContextSafetyMargin = 0
	tel, err := telemetry.Open(context.Background(), config.Telemetry{MetricsAddr: "127.0.0.1:0"}, telemetry.Options{Version: "test"})
	if err != nil || tel == nil {
		t.Fatalf("telemetry: %v %v", tel, err)
	}
	t.Cleanup(func() { _ = tel.Close(context.Background()) })
	r, err := NewRegistry(Options{Config: cfg, Telemetry: tel})
	if err != nil {
		t.Fatal(err)
	}
	id := Identity{Agent: "main"}
	dir := filepath.Join(cfg.MemoryDir, "scratchpad")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.log"), []byte(strings.Repeat("a line of a log with words\n", 3000)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, lines := range []int{2, 400, 600} {
		callTool(t, r, "s1", id, "head", map[string]any{"file": "big.log", "lines": lines})
	}
	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var line string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "scratchpad_refusals_total{") && strings.Contains(l, `kind="budget"`) {
			line = l
		}
	}
	if !strings.HasSuffix(line, " 2") {
		t.Fatalf("budget refusals: %q, want 2 (two heads over the budget)\n%s", line, body)
	}
}
