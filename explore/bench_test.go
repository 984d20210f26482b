package explore

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore/internal/benchdata"
)

// The benchmarks generate ~100 MB inputs once per machine into
// $TMPDIR/scratchpad-explore-bench (override with SCRATCHPAD_BENCH_DIR and
// SCRATCHPAD_BENCH_MB); they are never committed.

func benchEnv(b *testing.B) (*Env, int) {
	b.Helper()
	dir := os.Getenv("SCRATCHPAD_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "scratchpad-explore-bench")
	}
	mb := int64(100)
	if s := os.Getenv("SCRATCHPAD_BENCH_MB"); s != "" {
		var n int64
		for _, c := range s {
			n = n*10 + int64(c-'0')
		}
		mb = n
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for name, gen := range map[string]func(w *os.File, size int64) error{
		"listing.json": func(w *os.File, size int64) error { _, err := benchdata.Listing(w, size); return err },
		"app.log":      func(w *os.File, size int64) error { _, err := benchdata.Log(w, size); return err },
		"pods.json":    func(w *os.File, size int64) error { _, err := benchdata.Pods(w, size); return err },
		"tree.json":    func(w *os.File, size int64) error { _, err := benchdata.Tree(w, size); return err },
	} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Size() >= mb<<20 {
			continue
		}
		f, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if err := gen(f, mb<<20); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { root.Close() })
	env := &Env{Root: root, Count: wordCount, MaxExtractionTokens: 1 << 30, Cache: NewCache(1 << 30)}
	// Items in the listing: read back from its tail.
	res := Call(context.Background(), env, ToolGetIn, map[string]any{"file": "listing.json", "path": "total_count"})
	n := 0
	for _, c := range strings.SplitN(text(res), "\n", 2)[0] {
		n = n*10 + int(c-'0')
	}
	return env, n
}

func benchCall(b *testing.B, env *Env, tool string, args map[string]any) {
	b.Helper()
	// First touch outside the timed loop: these measure the calls after it.
	Call(context.Background(), env, tool, args)
	for b.Loop() {
		res := Call(context.Background(), env, tool, args)
		if t := text(res); strings.HasPrefix(t, `{"error"`) {
			b.Fatal(t)
		}
	}
}

// BenchmarkFirstTouch measures loading, validating and indexing the 100 MB
// listing plus indexing its 200k-item array: what the first call on a file pays.
func BenchmarkFirstTouch(b *testing.B) {
	env, n := benchEnv(b)
	b.SetBytes(100 << 20)
	for b.Loop() {
		env.Cache = NewCache(1 << 30)
		res := Call(context.Background(), env, ToolGetIn, map[string]any{"file": "listing.json", "path": "results." + itoa(n-1) + ".id"})
		if strings.HasPrefix(text(res), `{"error"`) {
			b.Fatal(text(res))
		}
	}
}

// BenchmarkFirstTouchLog is the same for the 100 MB log (load + line index).
func BenchmarkFirstTouchLog(b *testing.B) {
	env, _ := benchEnv(b)
	for b.Loop() {
		env.Cache = NewCache(1 << 30)
		res := Call(context.Background(), env, ToolSlice, map[string]any{"file": "app.log", "start": 1000000, "end": 1000049})
		if strings.HasPrefix(text(res), `{"error"`) {
			b.Fatal(text(res))
		}
	}
}

// The query benchmarks run on the 100 MB pod listing (~183k pods): the
// two questions of scripts/bench-explore.sh, cold (a fresh cache: read +
// validate + index + query, what the first call on a new server pays) and
// warm (the file is cached and indexed).
var (
	countFailed = map[string]any{"file": "pods.json", "path": "items", "group_by": "status.phase", "filter": "?(@.status.phase == 'Failed')"}
	countPhases = map[string]any{"file": "pods.json", "path": "items", "group_by": "status.phase"}
)

func benchCold(b *testing.B, tool string, args map[string]any) {
	env, _ := benchEnv(b)
	for b.Loop() {
		env.Cache = NewCache(1 << 30)
		if t := text(Call(context.Background(), env, tool, args)); strings.HasPrefix(t, `{"error"`) {
			b.Fatal(t)
		}
	}
}

func BenchmarkCountFailedCold(b *testing.B) { benchCold(b, ToolCountBy, countFailed) }

// countFiles counts the files of a directory tree at any depth: a
// recursive descent with a filter (jq: [.. | objects | select(.type ==
// "file")] | length).
var countFiles = map[string]any{"file": "tree.json", "path": "$..[?@.type == 'file']"}

func BenchmarkDescentCountCold(b *testing.B) { benchCold(b, ToolCountBy, countFiles) }

func BenchmarkDescentCountWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolCountBy, countFiles)
}
func BenchmarkCountPhasesCold(b *testing.B) { benchCold(b, ToolCountBy, countPhases) }

func BenchmarkCountFailedWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolCountBy, countFailed)
}

func BenchmarkCountPhasesWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolCountBy, countPhases)
}

// BenchmarkFilterSortWarm: failed pods with restarts, most restarts first,
// 20 rows.
func BenchmarkFilterSortWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolIterateOver, map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name,status.restartCount",
		"filter": "?(@.status.phase == 'Failed' && @.status.restartCount > 3)", "sort_by": "status.restartCount", "order": "desc", "limit": 20})
}

func BenchmarkDistinctImagesWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolCountBy, map[string]any{"file": "pods.json", "path": "items", "distinct": "spec.containers[*].image"})
}

func BenchmarkGetInWarm(b *testing.B) {
	env, n := benchEnv(b)
	benchCall(b, env, ToolGetIn, map[string]any{"file": "listing.json", "path": "$.results[" + itoa(n*3/4) + "].metadata"})
}

func BenchmarkIterateOver50Warm(b *testing.B) {
	env, n := benchEnv(b)
	benchCall(b, env, ToolIterateOver, map[string]any{"file": "listing.json", "path": "results", "fields": "id,title,metadata.author.login", "offset": n / 2, "limit": 50})
}

func BenchmarkItemSchema100Warm(b *testing.B) {
	env, n := benchEnv(b)
	benchCall(b, env, ToolItemSchema, map[string]any{"file": "listing.json", "path": "results", "offset": n / 3, "limit": 100})
}

func BenchmarkSliceWarm(b *testing.B) {
	env, _ := benchEnv(b)
	benchCall(b, env, ToolSlice, map[string]any{"file": "app.log", "start": 1000000, "end": 1000049})
}

// benchGrep scans the whole 100 MB log (every matching line is counted).
// warm: the file is cached; cold: every call reads it from the page cache
// and indexes its lines, as a GNU grep process does.
func benchGrep(b *testing.B, pattern string, ic, warm bool) {
	env, _ := benchEnv(b)
	if !warm {
		env.Cache = nil
	}
	b.SetBytes(100 << 20)
	benchCall(b, env, ToolGrep, map[string]any{"file": "app.log", "pattern": pattern, "ignore_case": ic, "context": 0, "max_matches": 5})
}

const (
	grepLiteral = "timeout after"
	grepFold    = "TIMEOUT AFTER"
	grepRegex   = `timeout after [0-9]+ms \(attempt 3`
	grepNoLit   = `[0-9]{3}-[a-f]{4}`
)

func BenchmarkGrepLiteralWarm(b *testing.B)    { benchGrep(b, grepLiteral, false, true) }
func BenchmarkGrepIgnoreCaseWarm(b *testing.B) { benchGrep(b, grepFold, true, true) }
func BenchmarkGrepRegexWarm(b *testing.B)      { benchGrep(b, grepRegex, false, true) }
func BenchmarkGrepNoLiteralWarm(b *testing.B)  { benchGrep(b, grepNoLit, false, true) }
func BenchmarkGrepLiteralCold(b *testing.B)    { benchGrep(b, grepLiteral, false, false) }
func BenchmarkGrepIgnoreCaseCold(b *testing.B) { benchGrep(b, grepFold, true, false) }
func BenchmarkGrepRegexCold(b *testing.B)      { benchGrep(b, grepRegex, false, false) }
func BenchmarkGrepNoLiteralCold(b *testing.B)  { benchGrep(b, grepNoLit, false, false) }

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// benchHandler is benchCall through the handler a server calls: the raw
// JSON arguments validated and decoded, a call slot taken, then the call.
func benchHandler(b *testing.B, tool string, args string) {
	env, _ := benchEnv(b)
	var h func(context.Context, json.RawMessage) string
	for _, d := range Tools(func(context.Context) (*Env, error) { return env, nil }) {
		if d.Name == tool {
			h = func(ctx context.Context, raw json.RawMessage) string { return d.Handler(ctx, raw).Text }
		}
	}
	raw := json.RawMessage(args)
	h(context.Background(), raw)
	for b.Loop() {
		if t := h(context.Background(), raw); strings.HasPrefix(t, `{"error"`) {
			b.Fatal(t)
		}
	}
}

func BenchmarkHandlerSliceWarm(b *testing.B) {
	benchHandler(b, ToolSlice, `{"file":"app.log","start":1000000,"end":1000049}`)
}

func BenchmarkHandlerGetInWarm(b *testing.B) {
	benchHandler(b, ToolGetIn, `{"file":"listing.json","path":"$.results[1000].metadata"}`)
}

func BenchmarkHandlerIterateOverWarm(b *testing.B) {
	benchHandler(b, ToolIterateOver, `{"file":"listing.json","path":"results","fields":"id,title,metadata.author.login","offset":1000,"limit":50}`)
}
