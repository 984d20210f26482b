package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// The audit needs no tracer (issue 53): with only [telemetry] audit_log,
// every tools/call of either era writes its line. And the dashboard
// draws live calls on the MCP port with no [telemetry] at all.
func TestAuditOnlyAndDashboardWithoutTelemetry(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[telemetry]\naudit_log = \"audit.jsonl\"\n")
	base := startHTTP(t, "http", cfg)
	old := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "a2025"})
	waitForTool(t, old, "echo")
	modern := modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "a2026"})
	for i := range 5 {
		callTool(t, old, "echo", map[string]any{"text": "x"})
		callTool(t, modern, "echo", map[string]any{"text": "y"})
		_ = i
	}
	path := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
	var lines []string
	testwait.For(t, "ten audit lines", func() bool {
		f, err := os.Open(path)
		if err != nil {
			return false
		}
		defer f.Close()
		lines = nil
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		return len(lines) >= 10
	})
	agents := map[string]int{}
	for _, l := range lines {
		for _, a := range []string{"a2025", "a2026"} {
			if strings.Contains(l, `"agent":"`+a+`"`) && strings.Contains(l, `"tool":"echo"`) {
				agents[a]++
			}
		}
	}
	if agents["a2025"] != 5 || agents["a2026"] != 5 {
		t.Errorf("audit lines by agent %v, want 5 each:\n%s", agents, strings.Join(lines, "\n"))
	}

	// No [telemetry]: the dashboard is there, with the calls.
	cfg2, _ := writeConfig(t, "")
	base2 := startHTTP(t, "http", cfg2)
	c := httpClient(t, base2+"/mcp", map[string]string{"X-Scratchpad-Agent": "dash"})
	waitForTool(t, c, "echo")
	callTool(t, c, "echo", map[string]any{"text": "z"})
	resp, err := http.Get(base2 + "/dashboard/data.json")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "dash") || !strings.Contains(string(b), "echo") {
		t.Errorf("/dashboard/data.json without [telemetry]: %d %.500s", resp.StatusCode, b)
	}
}
