package toolsearch

import (
	"strings"
	"testing"
)

// Recall gates, top-3, in percent. The held-out requests (written after
// the weights and synonyms were chosen, and never tuned on) are the
// out-of-sample figure and the gate that matters: 53/62 (85.5%) when it
// was set; the gate lets one more miss (52/62 = 83.9%), since the search
// is deterministic and a loss of two is a change to explain (the
// description's weight cut to 0.2 loses three, synonyms off two). The
// tuned requests are gated
// too, as a regression guard only (68/71, 95.8%): a change tuned to them
// shows there first, and says nothing of requests nobody wrote yet.
const (
	minHeldOutTop3 = 83
	minTunedTop3   = 92
)

// TestRecall runs the query set over the catalogue: the expected tool must
// be in the top 3 for at least minHeldOutTop3% of the held-out requests
// and minTunedTop3% of the tuned ones. Top-1 is logged, by group and by
// the round that added held-out requests, as is every miss, with what
// came first instead.
func TestRecall(t *testing.T) {
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	qs := loadQueries(t)
	type tally struct{ top1, top3, n int }
	groups := map[string]*tally{}
	add := func(g string, r int) {
		c := groups[g]
		if c == nil {
			c = &tally{}
			groups[g] = c
		}
		c.n++
		if r == 1 {
			c.top1++
		}
		if r >= 1 && r <= 3 {
			c.top3++
		}
	}
	for _, q := range qs {
		hits := ix.Search(q.Query, 5)
		r := rankOf(hits, q.Expect)
		add("all", r)
		add("kind "+q.Kind, r)
		if q.Holdout {
			add("held-out", r)
			round := q.Added
			if round == "" {
				round = "first"
			}
			add("held-out "+round, r)
		} else {
			add("tuned", r)
		}
		if r != 1 {
			var got []string
			for _, h := range hits[:min(3, len(hits))] {
				got = append(got, h.Name)
			}
			t.Logf("rank %d: %q want %v, got %s", r, q.Query, q.Expect, strings.Join(got, " "))
		}
	}
	for _, g := range []string{"all", "kind words", "kind paraphrase", "tuned", "held-out", "held-out first", "held-out issue 35"} {
		if c := groups[g]; c != nil {
			t.Logf("%s: top-1 %d/%d (%.0f%%), top-3 %d/%d (%.1f%%)", g, c.top1, c.n, pct(c.top1, c.n), c.top3, c.n, pct(c.top3, c.n))
		}
	}
	for _, gate := range []struct {
		group string
		min   float64
	}{{"held-out", minHeldOutTop3}, {"tuned", minTunedTop3}} {
		c := groups[gate.group]
		if c == nil || c.n < 30 {
			t.Fatalf("%s: too few requests to gate on: %+v", gate.group, c)
		}
		if got := pct(c.top3, c.n); got < gate.min {
			t.Errorf("%s top-3 recall %d/%d = %.1f%% < %.0f%%", gate.group, c.top3, c.n, got, gate.min)
		}
	}
}

func pct(a, b int) float64 { return 100 * float64(a) / float64(max(b, 1)) }
