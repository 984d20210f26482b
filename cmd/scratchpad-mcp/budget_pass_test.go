package main

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The budget holds for results that pass through, not only for
// exploration (issue 53): with a 20,000-token window (16,000 usable), a
// tool with no threshold whose results are some 3,300 tokens each passes
// them while they fit what is left, and diverts the rest, saying how much
// is left; what passed never adds up past the budget. Both eras.
func TestBudgetHoldsForPassThrough(t *testing.T) {
	text := strings.Repeat("alpha beta gamma delta epsilon zeta eta theta iota kappa ", 330) // thousands of tokens
	cfg, _ := writeAgentConfig(t, "context_window = 20000\n", "")
	leftSaid := regexp.MustCompile(`: ([\d,]+) tokens would have entered your context, which has ([\d,]+) left in its budget`)
	num := func(s string) int { n, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return n }
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			var cs *mcp.ClientSession
			if era == "2025-11-25" {
				cs = stdioSession(t, os.Environ(), binary(t), "serve", "--config", cfg)
			} else {
				base := startHTTP(t, "http", cfg)
				cs = modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "budget-2026"})
			}
			waitForTool(t, cs, "echo")
			passed, diverted, size := 0, 0, 0
			for i := range 8 {
				out := callTool(t, cs, "echo", map[string]any{"text": text})
				if m := leftSaid.FindStringSubmatch(out); m != nil {
					diverted++
					size = num(m[1])
					if left := num(m[2]); left >= size {
						t.Errorf("call %d (%d tokens) diverted with %d left, which would have held it", i, size, left)
					}
					continue
				}
				if out != text {
					t.Fatalf("call %d: neither the text nor a pointer: %.300s", i, out)
				}
				passed++
			}
			t.Logf("%d passed, %d diverted, %d tokens each", passed, diverted, size)
			if passed == 0 || diverted == 0 || passed*size > 16000 {
				t.Errorf("%d passed (%d tokens), %d diverted: the pass-through must stop at the budget of 16,000", passed, passed*size, diverted)
			}
		})
	}
}
