package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// Issue 6 at the server level: per-agent budgets and storage, worker
// overrides, reported usage, usage events.

var footerLeft = regexp.MustCompile(`~([\d,]+) tokens, ~([\d,]+) left of ([\d,]+)`)

// footerNumbers reads an exploration footer: the result's tokens, what is
// left and the budget's total.
func footerNumbers(t *testing.T, out string) (tokens, left, total int) {
	t.Helper()
	m := footerLeft.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no budget in footer:\n%s", short(out))
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	return atoi(m[1]), atoi(m[2]), atoi(m[3])
}

func leftOf(t *testing.T, out string) (left, total int) {
	t.Helper()
	_, left, total = footerNumbers(t, out)
	return left, total
}

// footerFigures is the result's tokens and what is left.
func footerFigures(t *testing.T, out string) (tokens, left int) {
	t.Helper()
	tokens, left, _ = footerNumbers(t, out)
	return tokens, left
}

const orchestrationExtra = `
[orchestration.worker.bob]
context_window = 50000

[orchestration.worker.bob.scratchpad]
max_extraction_tokens = 300
`

func TestAgentsHaveOwnBudgetsAndOverrides(t *testing.T) {
	cfg, mem := writeConfig(t, orchestrationExtra)
	base := startHTTP(t, "http", cfg)
	alice := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "r7", "X-Scratchpad-Iteration": "1"})
	bob := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "r7", "X-Scratchpad-Iteration": "2"})
	waitForTool(t, alice, "listing")
	waitForTool(t, bob, "listing")

	// Each is told its own limits, in the instructions and _meta.
	for _, tc := range []struct {
		name      string
		c         *mcp.ClientSession
		cap, wind int
	}{{"alice", alice, 2000, 128000}, {"bob", bob, 300, 50000}} {
		init := tc.c.InitializeResult()
		want := fmt.Sprintf("max_extraction_tokens=%d, context_window=%d,", tc.cap, tc.wind)
		if !strings.Contains(init.Instructions, want) {
			t.Errorf("%s's instructions lack %q:\n%s", tc.name, want, init.Instructions)
		}
		lim, _ := init.Meta["scratchpad/limits"].(map[string]any)
		if lim["max_extraction_tokens"] != float64(tc.cap) || lim["context_window"] != float64(tc.wind) {
			t.Errorf("%s's _meta limits: %v", tc.name, lim)
		}
	}

	// Override is field by field: bob keeps enabled=true (his listing is
	// still diverted) but gets his own cap and window.
	pa := callTool(t, alice, "listing", map[string]any{"n": 300})
	pb := callTool(t, bob, "listing", map[string]any{"n": 300})
	if !strings.Contains(pa, "diverted") || !strings.Contains(pb, "diverted") {
		t.Fatalf("both agents' listings must be diverted:\n%s\n%s", short(pa), short(pb))
	}
	fa := filepath.Base(firstFile(t, filepath.Join(mem, "r7", "iteration-1", "scratchpad")))
	fb := filepath.Base(firstFile(t, filepath.Join(mem, "r7", "iteration-2", "scratchpad")))

	ha := callTool(t, alice, "head", map[string]any{"file": fa, "lines": 60})
	hb := callTool(t, bob, "head", map[string]any{"file": fb, "lines": 60})
	if strings.Contains(ha, "_too_large") {
		t.Fatalf("alice (cap 2000) should get 60 lines:\n%s", short(ha))
	}
	var e struct {
		Error        string `json:"error"`
		PerCallLimit int    `json:"per_call_limit"`
	}
	if err := json.Unmarshal([]byte(hb), &e); err != nil || e.Error != "head_too_large" || e.PerCallLimit != 300 {
		t.Fatalf("bob (cap 300) should get head_too_large with per_call_limit 300:\n%s", short(hb))
	}
	_, totalA := leftOf(t, ha)
	if totalA != 102400 { // gpt-4o 128k × 0.8
		t.Errorf("alice's usable budget %d, want 102400", totalA)
	}
	hb = callTool(t, bob, "head", map[string]any{"file": fb, "lines": 5})
	_, totalB := leftOf(t, hb)
	if totalB != 40000 { // bob's window 50k × 0.8
		t.Errorf("bob's usable budget %d, want 40000", totalB)
	}
	// Separate accounting: alice's extraction did not touch bob's budget.
	leftA1, _ := leftOf(t, callTool(t, alice, "head", map[string]any{"file": fa, "lines": 5}))
	leftA2, _ := leftOf(t, callTool(t, alice, "head", map[string]any{"file": fa, "lines": 5}))
	leftB1, _ := leftOf(t, callTool(t, bob, "head", map[string]any{"file": fb, "lines": 5}))
	leftB2, _ := leftOf(t, callTool(t, bob, "head", map[string]any{"file": fb, "lines": 5}))
	if leftA2 >= leftA1 || leftB2 >= leftB1 {
		t.Errorf("extractions not charged: alice %d→%d, bob %d→%d", leftA1, leftA2, leftB1, leftB2)
	}
}

func firstFile(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("%s: %v %v", dir, entries, err)
	}
	return filepath.Join(dir, entries[0].Name())
}

func TestReportedUsageExhaustsBudget(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "carol"})
	waitForTool(t, c, "listing")
	callTool(t, c, "listing", map[string]any{"n": 300})
	file := filepath.Base(firstFile(t, filepath.Join(mem, "scratchpad")))
	left0, total := leftOf(t, callTool(t, c, "head", map[string]any{"file": file, "lines": 3}))

	// The client reports the model's real usage in _meta: used rises to it.
	req := &mcp.CallToolParams{Name: "head", Arguments: map[string]any{"file": file, "lines": 3}}
	req.Meta = mcp.Meta{"scratchpad/usage": map[string]any{"input_tokens": total - 5000, "output_tokens": 1000}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	out := text(res)
	left1, _ := leftOf(t, out)
	if left1 >= left0 || left1 > 4000 {
		t.Fatalf("reported usage not applied: left %d → %d (total %d)", left0, left1, total)
	}
	// A lower report never lowers used.
	req.Meta = mcp.Meta{"scratchpad/usage": map[string]any{"input_tokens": 10}}
	res, err = c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if left2, _ := leftOf(t, text(res)); left2 > left1 {
		t.Fatalf("a lower report raised the budget: %d → %d", left1, left2)
	}
	// Exhaust it: the report says the context is full; a small head is refused.
	req.Meta = mcp.Meta{"scratchpad/usage": map[string]any{"input_tokens": total}}
	res, err = c.CallTool(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Error     string `json:"error"`
		Remaining *int   `json:"remaining_budget_tokens"`
	}
	if err := json.Unmarshal([]byte(text(res)), &e); err != nil || e.Error != "head_too_large" || e.Remaining == nil {
		t.Fatalf("exhausted budget: want head_too_large with remaining_budget_tokens, got %s", short(text(res)))
	}
}

func TestContextTokensHeaderRaisesUsed(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "dave", "X-Scratchpad-Context-Tokens": "100000"})
	waitForTool(t, c, "listing")
	callTool(t, c, "listing", map[string]any{"n": 300})
	file := filepath.Base(firstFile(t, filepath.Join(mem, "scratchpad")))
	left, total := leftOf(t, callTool(t, c, "head", map[string]any{"file": file, "lines": 3}))
	if left > total-100000 {
		t.Fatalf("header usage not applied: %d left of %d", left, total)
	}
}

func TestIdleAgentWritesNoUsage(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	idle := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "idle"})
	busy := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "busy"})
	waitForTool(t, idle, "echo") // listing tools is not work
	waitForTool(t, busy, "listing")
	callTool(t, busy, "listing", map[string]any{"n": 300})
	idle.Close()
	busy.Close()
	var b []byte
	if !testwait.Until(testwait.Timeout, func() bool {
		b, _ = os.ReadFile(filepath.Join(mem, "usage.jsonl"))
		return strings.Contains(string(b), `"agent_name":"busy"`)
	}) {
		t.Fatalf("busy's usage never written:\n%s", b)
	}
	if strings.Contains(string(b), `"agent_name":"idle"`) || strings.Count(string(b), "\n") != 1 {
		t.Fatalf("usage.jsonl should hold exactly busy's record:\n%s", b)
	}
}

func TestIdleSessionPastTTLWritesUsage(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg, "--session-ttl", "1s")
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "sleepy"})
	waitForTool(t, c, "listing")
	callTool(t, c, "listing", map[string]any{"n": 300})
	// No DELETE: the session just goes quiet and the server ends it.
	var b []byte
	if !testwait.Until(testwait.Timeout, func() bool {
		b, _ = os.ReadFile(filepath.Join(mem, "usage.jsonl"))
		return strings.Contains(string(b), `"agent_name":"sleepy"`)
	}) {
		t.Fatalf("idle session's usage never written:\n%s", b)
	}
}

func TestRunPadLedgerNamesEachAgent(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[pad]\nscope = \"run\"\n")
	base := startHTTP(t, "http", cfg)
	alice := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "r9"})
	bob := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "r9"})
	callTool(t, alice, "append_scratchpad", map[string]any{"note": "pods restart every 5 minutes"})
	callTool(t, bob, "append_scratchpad", map[string]any{"note": "node-3 is out of memory"})
	out := callTool(t, alice, "read_scratchpad", map[string]any{})
	if !strings.Contains(out, "(alice) pods restart") || !strings.Contains(out, "(bob) node-3") {
		t.Fatalf("the run's shared ledger should name each agent:\n%s", short(out))
	}
}
