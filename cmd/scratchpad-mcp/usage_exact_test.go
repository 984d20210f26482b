package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// bigListing is large enough (about 6 MB) that its exact count is left to
// the background after the pointer was sent (past the 4 MiB limit).
const bigListing = 20000

// A session that ends right after a divert whose count runs in the
// background (a stdio client closing stdin, an HTTP client deleting its
// session) still leaves one usage record, with the exact count of what
// was kept out of the model's context.
func TestUsageExactAfterQuickEnd(t *testing.T) {
	want := tokens.ForModel("openai", "gpt-4o").Count(testupstream.Listing(bigListing))
	check := func(t *testing.T, mem string, c *mcp.ClientSession, end func()) {
		t.Helper()
		out := callTool(t, c, "listing", map[string]any{"n": bigListing})
		if !strings.Contains(out, "file: ") {
			t.Fatalf("not diverted: %s", short(out))
		}
		end()
		var recs []budget.Usage
		testwait.For(t, "the usage record", func() bool {
			recs, _ = budget.ReadUsage(filepath.Join(mem, "usage.jsonl"), "")
			return len(recs) > 0
		})
		if len(recs) != 1 || recs[0].TokensIntercepted != want {
			b, _ := json.Marshal(recs)
			t.Fatalf("records %s, want one with tokens_intercepted %d", b, want)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		cfg, mem := writeConfig(t, "")
		c := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "warn")
		check(t, mem, c, func() { _ = c.Close() }) // stdin closed, the process gone
		if _, err := os.Stat(filepath.Join(mem, "usage.jsonl")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("http", func(t *testing.T) {
		cfg, mem := writeConfig(t, "")
		base := startHTTP(t, "http", cfg)
		c := httpClient(t, base+"/mcp", nil)
		waitForTool(t, c, "listing")
		check(t, mem, c, func() { _ = c.Close() }) // DELETE
	})
}

// Everything the model receives is charged at its exact count: a result
// passed through, a pointer, the pad's reading. The footer's "left" falls
// by exactly that.
func TestEverythingReceivedIsCharged(t *testing.T) {
	counter := tokens.ForModel("openai", "gpt-4o")
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", nil)
	waitForTool(t, c, "listing")
	pointer := callTool(t, c, "listing", map[string]any{"n": 300})
	file := storedName.FindStringSubmatch(pointer)
	if file == nil {
		t.Fatalf("not diverted: %s", short(pointer))
	}
	head := func() (int, int) {
		return footerFigures(t, callTool(t, c, "head", map[string]any{"file": file[1], "lines": 3}))
	}
	n, left := head()
	for _, step := range []struct {
		name string
		call func() string
	}{
		{"a result passed through", func() string { return callTool(t, c, "listing", map[string]any{"n": 2}) }},
		{"a pointer", func() string { return callTool(t, c, "listing", map[string]any{"n": 301}) }},
		{"the pad", func() string { return callTool(t, c, "read_scratchpad", map[string]any{}) }},
		{"an error answer", func() string { return callTool(t, c, "head", map[string]any{"file": "missing.json"}) }},
	} {
		got := step.call()
		cost := counter.CountString(got)
		n2, left2 := head()
		if n2 != n || left2 != left-cost-n {
			t.Errorf("after %s (%d tokens): left %d, want %d - %d - %d = %d", step.name, cost, left2, left, cost, n, left-cost-n)
		}
		left = left2
	}
}

// A result passed through that is big enough to be counted in the
// background (past 1 MiB) is counted once its answer has been written:
// the call's end, in either era, must come, or the budget would go
// uncharged for as long as divert.Charge waits (a minute). Each head
// charges its own tokens; the pass-through's count must come on top
// within the wait.
func TestBigPassThroughChargedOnceAnswered(t *testing.T) {
	counter := tokens.ForModel("openai", "gpt-4o")
	// The budget holds the pass-through, so that "left" shows its charge;
	// ndjson is never diverted.
	cfg, _ := writeAgentConfig(t, "context_window = 50000000\n", `"ndjson" = 90000000`)
	const n = 20000 // about 1.7 MB of text
	check := func(t *testing.T, c *mcp.ClientSession) {
		t.Helper()
		waitForTool(t, c, "listing")
		file := storedName.FindStringSubmatch(callTool(t, c, "listing", map[string]any{"n": 300}))
		if file == nil {
			t.Fatal("the listing was not diverted")
		}
		head := func() (int, int) {
			return footerFigures(t, callTool(t, c, "head", map[string]any{"file": file[1], "lines": 3}))
		}
		_, left := head()
		got := callTool(t, c, "ndjson", map[string]any{"n": n})
		if len(got) < 1<<20 || strings.Contains(got, "file: ") {
			t.Fatalf("not a big pass-through: %d bytes: %s", len(got), short(got))
		}
		cost := counter.CountString(got)
		heads := 0
		testwait.For(t, "the pass-through's charge", func() bool {
			headCost, left2 := head()
			heads += headCost
			if left2 > left-heads-cost {
				return false
			}
			if left2 != left-heads-cost {
				t.Fatalf("left %d, want %d - %d (heads) - %d (the pass-through) = %d", left2, left, heads, cost, left-heads-cost)
			}
			return true
		})
	}
	t.Run("stdio 2025-11-25", func(t *testing.T) {
		check(t, stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "warn"))
	})
	t.Run("http 2025-11-25", func(t *testing.T) {
		base := startHTTP(t, "http", cfg)
		check(t, httpClient(t, base+"/mcp", nil))
	})
	t.Run("http 2026-07-28", func(t *testing.T) {
		base := startHTTP(t, "http", cfg)
		check(t, modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "big"}))
	})
}
