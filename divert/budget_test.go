package divert

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// The budget left diverts what does not fit it, whatever the threshold
// (none here); a big text far under it passes on its first MiB's
// estimate, not counted whole before the answer (its charge comes after,
// Charge), and one near it is counted exactly.
func TestDecideBudgetLeft(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	text := strings.Repeat("alpha beta gamma delta epsilon ", 100_000) // 3.1 MB, ~500k tokens
	res := textResult(t, text, nil)
	for _, tc := range []struct {
		name     string
		left     int
		diverted bool
		charged  bool
	}{
		{"far under", 10_000_000, false, false},
		{"just over", 400_000, true, true},
		{"tiny", 1000, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			charged := false
			a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: c, Account: funcs{left: func() int { return tc.left },
				charged: func(int) { charged = true }}}
			out, err := Decide(Call{Server: "s", Tool: "t", Result: append([]byte(nil), res...), Valid: true}, a, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Diverted != tc.diverted || charged != tc.charged {
				t.Errorf("diverted %v charged %v, want %v %v", out.Diverted, charged, tc.diverted, tc.charged)
			}
			if out.Diverted && (!out.Pointer.OverBudget || !strings.Contains(string(out.Result), "left in its budget")) {
				t.Errorf("the pointer does not say the budget: %.300s", out.Result)
			}
		})
	}
}
