package explore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// Every suggestion of every too-large answer fits: over generated files
// (a pod listing, NDJSON records, a log with lines of every length) and
// caps of 200 and 10,000 tokens, with and without a nearly spent budget,
// each suggestion is run under the same cap and budget, and none is too
// large or fails. Counts are o200k_base's, as an agent's are.
func TestEverySuggestionFits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a few hundred calls over generated files")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var log strings.Builder
	services := []string{"api", "web", "auth", "billing", "search"}
	for i := range 4000 {
		fmt.Fprintf(&log, "2026-11-30T10:%02d:%02dZ level=%s service=%s msg=%q\n", i/60%60, i%60,
			[]string{"info", "warn", "error"}[rng.IntN(3)], services[rng.IntN(len(services))], strings.Repeat("x", rng.IntN(300)))
	}
	var nd strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&nd, `{"ts":%d,"level":"info","msg":"request %d served","status":%d}`+"\n", i, i, 200+rng.IntN(4)*100)
	}
	writeFile(t, filepath.Join(dir, "pods.json"), string(testupstream.Listing(8000)))
	writeFile(t, filepath.Join(dir, "events.ndjson"), nd.String())
	writeFile(t, filepath.Join(dir, "app.log"), log.String())
	counter := tokens.ForModel("openai", "gpt-4o")

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name,metadata.namespace,status.phase,spec.nodeName", "limit": 5000}},
		{"iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "?(@.status.phase == 'Failed')", "limit": 5000}},
		{"get_in", map[string]any{"file": "pods.json", "path": "items"}},
		{"get_in", map[string]any{"file": "pods.json", "path": "items", "offset": 100, "limit": 3000}},
		{"item_schema", map[string]any{"file": "pods.json", "path": "items", "limit": 8000}},
		{"count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "metadata.name", "top": 8000}},
		{"count_by", map[string]any{"file": "app.log", "pattern": `msg="(x*)"`, "top": 300}},
		{"schema", map[string]any{"file": "pods.json", "max_depth": 50}},
		{"head", map[string]any{"file": "app.log", "lines": 5000}},
		{"head", map[string]any{"file": "pods.json", "lines": 5000}},
		{"slice", map[string]any{"file": "app.log", "start": 100, "end": 6000}},
		{"grep", map[string]any{"file": "app.log", "pattern": "level=error", "context": 3, "max_matches": 2000}},
		{"grep", map[string]any{"file": "events.ndjson", "pattern": "served", "max_matches": 5000}},
		{"grep", map[string]any{"pattern": "service=api", "max_matches": 500}},
		{"read", map[string]any{"file": "app.log"}},
		{"iterate_over", map[string]any{"file": "events.ndjson", "path": "$", "fields": "ts,msg,status", "limit": 5000}},
	}
	tooLarge, offered := 0, 0
	for _, limit := range []int{200, 10000} {
		for _, left := range []int{0, 3000} {
			for _, c := range calls {
				env := dirEnv(t, dir)
				env.Count = counter.CountString
				env.MaxExtractionTokens = limit
				if left > 0 {
					env.Budget = &fakeBudget{total: 100000, left: left}
				}
				got := run(t, env, c.tool, c.args)
				if !strings.HasSuffix(errCode(got), "_too_large") {
					continue
				}
				tooLarge++
				var o struct {
					Suggestions []struct {
						Tool      string         `json:"tool"`
						Arguments map[string]any `json:"arguments"`
					} `json:"suggestions"`
				}
				if err := json.Unmarshal([]byte(got), &o); err != nil {
					t.Fatal(err)
				}
				for _, s := range o.Suggestions {
					offered++
					if left > 0 { // the model runs one of them, with what is left now
						env.Budget = &fakeBudget{total: 100000, left: left}
					}
					if code := errCode(run(t, env, s.Tool, s.Arguments)); code != "" {
						t.Errorf("cap %d, %d left: %s %v suggests %s %v, which answers %s", limit, left, c.tool, c.args, s.Tool, s.Arguments, code)
					}
				}
			}
		}
	}
	t.Logf("%d too-large answers, %d suggestions tried", tooLarge, offered)
	if tooLarge == 0 || offered == 0 {
		t.Fatal("no too-large answer to check")
	}
}

// TestFittedSuggestionsSayWhatTheyAre: a "half the …" suggestion whose
// window was fitted to the cap (head of 5,000 lines → a few dozen) must not
// say "half": its why says the window is fitted to the limit.
func TestFittedSuggestionsSayWhatTheyAre(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&log, "2026-11-30T10:%02d:%02dZ level=info service=api msg=\"request %d served in %d ms\"\n", i/60%60, i%60, i, i%97)
	}
	writeFile(t, filepath.Join(dir, "app.log"), log.String())
	writeFile(t, filepath.Join(dir, "pods.json"), string(testupstream.Listing(2000)))
	env := dirEnv(t, dir)
	env.Count = tokens.ForModel("openai", "gpt-4o").CountString
	env.MaxExtractionTokens = 2000
	for _, tc := range []struct {
		tool string
		args map[string]any
		arg  string // the window argument of the halving suggestion
		full int    // the window that was too large
	}{
		{"head", map[string]any{"file": "app.log", "lines": 5000}, "lines", 5000},
		{"grep", map[string]any{"file": "app.log", "pattern": "served", "context": 0, "max_matches": 5000}, "max_matches", 5000},
		{"iterate_over", map[string]any{"file": "pods.json", "path": "$.items", "fields": "metadata.name,status.phase", "limit": 2000}, "limit", 2000},
		{"get_in", map[string]any{"file": "pods.json", "path": "$.items", "limit": 2000}, "limit", 2000},
	} {
		got := run(t, env, tc.tool, tc.args)
		var e struct {
			Error       string `json:"error"`
			Suggestions []struct {
				Tool      string         `json:"tool"`
				Arguments map[string]any `json:"arguments"`
				Why       string         `json:"why"`
			} `json:"suggestions"`
		}
		if err := json.Unmarshal([]byte(got), &e); err != nil || !strings.HasSuffix(e.Error, "_too_large") {
			t.Fatalf("%s: %v %.300s", tc.tool, err, got)
		}
		fitted := 0
		for _, s := range e.Suggestions {
			n, ok := s.Arguments[tc.arg].(float64)
			if !ok || s.Tool != tc.tool {
				continue
			}
			half := int(n) == tc.full/2
			if strings.Contains(s.Why, "half") != half {
				t.Errorf("%s: %s=%d of %d, why %q", tc.tool, tc.arg, int(n), tc.full, s.Why)
			}
			if !half {
				fitted++
				if !strings.Contains(s.Why, "fit") {
					t.Errorf("%s: a fitted window (%s=%d) whose why does not say so: %q", tc.tool, tc.arg, int(n), s.Why)
				}
				t.Logf("%s: %s %d → %d: %q", tc.tool, tc.arg, tc.full, int(n), s.Why)
			}
		}
		if fitted == 0 {
			t.Errorf("%s: no fitted suggestion to check: %.500s", tc.tool, got)
		}
	}
}
