package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// TestReport prints the figures for the test catalogue and query
// set (scripts/bench-toolsearch.sh runs it for make bench):
//
//	TOOLSEARCH_REPORT=1 go test ./toolsearch -run TestReport -v
//
// Figures only: nothing here fails on them (TestRecall holds the recall
// goal; no test asserts a time).
func TestReport(t *testing.T) {
	if os.Getenv("TOOLSEARCH_REPORT") == "" {
		t.Skip("set TOOLSEARCH_REPORT=1 for the figures")
	}
	tools, listing := loadCatalogue(t)
	qs := loadQueries(t)
	o200k := tokens.ForModel("openai", "gpt-4o")
	claude := tokens.ForModel("anthropic", "claude-sonnet-4")
	say := func(format string, args ...any) { fmt.Printf(format+"\n", args...) }

	servers := map[string]bool{}
	for _, tl := range tools {
		servers[tl.Server] = true
	}
	full, _ := json.Marshal(map[string]any{"tools": listing})
	say("catalogue: %d tools on %d upstreams (testdata/catalogue.json); %d requests (testdata/queries.json)", len(tools), len(servers), len(qs))
	say("tools/list of the whole catalogue, compact JSON: %d bytes, %d tokens %s, %d tokens %s",
		len(full), o200k.Count(full), o200k.Name(), claude.Count(full), claude.Name())

	ix := NewIndex(tools)
	for _, limit := range []int{DefaultLimit, 8} {
		var top1, top3 int
		var ans, ansClaude []int
		kind := map[string][3]int{} // top-3 hits, requests, top-1 hits
		for _, q := range qs {
			hits := ix.Search(q.Query, limit)
			r := rankOf(hits, q.Expect)
			group := "tuned"
			if q.Holdout {
				group = "holdout"
			}
			k := kind[group]
			if r == 1 {
				k[2]++
			}
			if r == 1 {
				top1++
			}
			if r >= 1 && r <= 3 {
				top3++
				k[0]++
			}
			k[1]++
			kind[group] = k
			if q.Kind == "words" {
				w := kind["words"]
				w[1]++
				if r >= 1 && r <= 3 {
					w[0]++
				}
				kind["words"] = w
			}
			a := ix.Format(hits)
			ans = append(ans, o200k.CountString(a))
			ansClaude = append(ansClaude, claude.CountString(a))
		}
		if limit == DefaultLimit {
			n := len(qs)
			say("recall: top-1 %d/%d = %.1f%%, top-3 %d/%d = %.1f%%; top-3 with the tool's words %d/%d, paraphrased %d/%d",
				top1, n, pct(top1, n), top3, n, pct(top3, n), kind["words"][0], kind["words"][1], top3-kind["words"][0], n-kind["words"][1])
			for _, g := range []string{"tuned", "holdout"} {
				k := kind[g]
				say("  %-7s (%s): top-1 %d/%d = %.1f%%, top-3 %d/%d = %.1f%%", g, map[string]string{
					"tuned":   "the requests the weights and synonyms were chosen on",
					"holdout": "written afterwards, never tuned on",
				}[g], k[2], k[1], pct(k[2], k[1]), k[0], k[1], pct(k[0], k[1]))
			}
		}
		say("one search answer at limit %d: median %d, p95 %d, max %d tokens %s; median %d, p95 %d tokens %s",
			limit, quantile(ans, 0.5), quantile(ans, 0.95), slices.Max(ans), o200k.Name(),
			quantile(ansClaude, 0.5), quantile(ansClaude, 0.95), claude.Name())
	}

	big := synthetic(t, 1000)
	const builds = 20
	var buildWall []time.Duration
	cpu0 := cpuTime()
	var bix *Index
	for range builds {
		t0 := time.Now()
		bix = NewIndex(big)
		buildWall = append(buildWall, time.Since(t0))
	}
	buildCPU := (cpuTime() - cpu0) / builds
	const rounds = 200
	var lat []time.Duration
	cpu0 = cpuTime()
	for range rounds {
		for _, q := range qs {
			t0 := time.Now()
			bix.Search(q.Query, DefaultLimit)
			lat = append(lat, time.Since(t0))
		}
	}
	searchCPU := (cpuTime() - cpu0) / time.Duration(rounds*len(qs))
	var fmtLat []time.Duration
	for _, q := range qs {
		t0 := time.Now()
		bix.Format(bix.Search(q.Query, DefaultLimit))
		fmtLat = append(fmtLat, time.Since(t0))
	}
	say("search over %d tools: p50 %s, p95 %s wall (%d searches), %s CPU per search; with Format p50 %s",
		len(big), quantile(lat, 0.5), quantile(lat, 0.95), len(lat), searchCPU, quantile(fmtLat, 0.5))
	say("NewIndex of %d tools: median %s wall, %s CPU (including GC), over %d builds",
		len(big), quantile(buildWall, 0.5), buildCPU, builds)
	load, _ := os.ReadFile("/proc/loadavg")
	say("load average: %s (other work on the machine inflates wall times)", strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	if testing.Verbose() {
		q := qs[0]
		say("\nexample answer for %q:\n%s", q.Query, ix.Format(ix.Search(q.Query, DefaultLimit)))
	}
}

// quantile is the q-quantile of xs by the nearest-rank method.
func quantile[T int | time.Duration](xs []T, q float64) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}
