package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

func run(t testing.TB, env *Env, tool string, args map[string]any) string {
	t.Helper()
	return text(Call(context.Background(), env, tool, args))
}

// errCode returns the "error" code of a structured error result, or "".
func errCode(s string) string {
	if !strings.HasPrefix(s, `{"error":`) {
		return ""
	}
	var o struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		return "unparseable"
	}
	return o.Error
}

func dirEnv(t testing.TB, dir string) *Env {
	t.Helper()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &Env{Root: root, Count: wordCount}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want string // the parsed query rendered (queryText), or "error"
	}{
		{"", "$"},
		{"$", "$"},
		{".", "$"},
		{"$.items[3].metadata.name", "$.items[3].metadata.name"},
		{"items.3.metadata.name", "$.items.3.metadata.name"},
		{"items[3]", "$.items[3]"},
		{"[0].id", "$[0].id"},
		{"$[-1]", "$[-1]"},
		{`$["a.b"]['c d'].e`, `$["a.b"]["c d"].e`},
		{`a\.b.c`, `$["a.b"].c`},
		{`$[ 2 ]`, "$[2]"},
		{"$.kube-system", "error"}, // RFC 9535: - needs quotes after $
		{"kube-system.pods", `$["kube-system"].pods`},
		{"$[*].name", "$[*].name"},
		{"$..children[?@.type=='file']", "$..children[?@.type=='file']"},
		{"$['a','b'][1:3][::-1]", `$["a","b"][1:3][::-1]`},
		{"items[*].tags[0,-1]", "$.items[*].tags[0,-1]"},
		{"a..b", "$.a..b"},
		{"$..*", "$..*"},
		{"$.", "error"},
		{"$.1", "error"},
		{" $", "error"},
		{"$ ", "error"},
		{"a[", "error"},
		{"a[x]", "error"},
		{"a[+1]", "error"},
		{`a["x]`, "error"},
		{"$x", "error"},
		{"$[?@.a[*] == 1]", "error"},
		{strings.Repeat("a.", 3000), "error"},
	}
	for _, tc := range tests {
		q, err := parsePath(tc.in)
		got := "error"
		if err == nil {
			got = queryText(q)
		} else if !errors.Is(err, ErrBadPath) {
			t.Errorf("parsePath(%q) error %v does not wrap ErrBadPath", tc.in, err)
		}
		if got != tc.want {
			t.Errorf("parsePath(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// FuzzParsePath: the parser never panics, fails with a column inside the
// path, whatever parses evaluates without panicking, and a singular path's
// canonical rendering parses back to the same segments.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"$.items[3].metadata.name", "items.3.a", `$["a.b"]['c']`, `a\.b`, "[-1]", "$[", `["\u00e9"]`, "$..a[?@.b > 1, 0:2]",
		"$..[?match(@.n, 'a.*') || count(@..*) > 2][::-1]", "$.a[?value(@..b) == $.c]"} {
		f.Add(s)
	}
	d := newDoc("f.json", "f.json", []byte(`{"a":[{"b":1,"n":"ab"},{"b":[1,"x",{"b":null}],"c":true},[],{}],"c":1,"3":"three","n":"a\nb"}`))
	f.Fuzz(func(t *testing.T, p string) {
		q, err := parsePath(p)
		if err != nil {
			var se *syntaxError
			if !errors.As(err, &se) || se.column() < 1 || se.column() > len([]rune(p))+1 {
				t.Fatalf("%q: bad error %v", p, err)
			}
			return
		}
		if _, _, err := d.selectPath(context.Background(), q); err != nil && !errors.Is(err, errTooManyNodes) {
			t.Fatalf("%q: %v", p, err)
		}
		if !q.singular {
			return
		}
		segs := segments(q)
		canon := pathString(segs)
		if len(canon) > maxPathLen {
			return // escaping can lengthen a key past the limit
		}
		again, err := parsePath(canon)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", canon, p, err)
		}
		back := segments(again)
		if len(back) != len(segs) {
			t.Fatalf("canonical %q of %q: %d segments, want %d", canon, p, len(back), len(segs))
		}
		for i := range segs {
			if segs[i].kind == segIndex && (back[i].kind != segIndex || back[i].index != segs[i].index) ||
				segs[i].kind != segIndex && back[i].key != segs[i].key {
				t.Fatalf("canonical %q of %q: segment %d changed: %+v vs %+v", canon, p, i, back[i], segs[i])
			}
		}
	})
}

func TestConfinement(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "run")
	outside := filepath.Join(base, "secret")
	writeFile(t, filepath.Join(outside, "key.txt"), "TOPSECRET\n")
	writeFile(t, filepath.Join(root, "iteration-1", "scratchpad", "out.json"), `{"a": 1}`)
	writeFile(t, filepath.Join(root, "artifacts", "x.txt"), "artifact line\n")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	sp := filepath.Join(root, "iteration-1", "scratchpad")
	must(os.Symlink(filepath.Join(outside, "key.txt"), filepath.Join(sp, "abs-link.txt")))
	must(os.Symlink("../../../secret/key.txt", filepath.Join(sp, "rel-link.txt")))
	must(os.Symlink("../../../secret", filepath.Join(sp, "dir-link")))
	must(os.Symlink("../../../secret/nothing-here.txt", filepath.Join(sp, "dangling-out.txt")))
	must(os.Symlink("out.json", filepath.Join(sp, "inside-link.json")))
	must(os.Mkdir(filepath.Join(sp, "subdir"), 0o755))

	env := dirEnv(t, root)
	env.Dir = "iteration-1/scratchpad"
	tests := []struct {
		file string
		code string // "" = success
	}{
		{"out.json", ""},
		{"inside-link.json", ""},
		{"../../artifacts/x.txt", ""},
		{"./out.json", ""},
		{"../../../secret/key.txt", "file_outside_root"},
		{filepath.Join(outside, "key.txt"), "file_outside_root"},
		{"abs-link.txt", "file_outside_root"},
		{"rel-link.txt", "file_outside_root"},
		{"dir-link/key.txt", "file_outside_root"},
		{"dangling-out.txt", "file_outside_root"},
		{"dir-link/nothing-here.txt", "file_outside_root"},
		{"out.json\x00.txt", "invalid_file_name"},
		{"", "invalid_file_name"},
		{"missing.json", "file_not_found"},
		{"subdir", "not_a_regular_file"},
		{"out.json/x", "file_not_found"},
	}
	for _, tc := range tests {
		for _, tool := range []string{"head", "read"} {
			got := run(t, env, tool, map[string]any{"file": tc.file})
			if c := errCode(got); c != tc.code {
				t.Errorf("%s %q: code %q, want %q: %s", tool, tc.file, c, tc.code, got)
			}
			if strings.Contains(got, "TOPSECRET") || strings.Contains(got, outside) && !strings.Contains(tc.file, outside) || strings.Contains(got, "nothing-here") && !strings.Contains(tc.file, "nothing-here") {
				t.Errorf("%s %q leaks outside content or paths: %s", tool, tc.file, got)
			}
		}
	}
	// The same refusal whether or not the outside target exists.
	a := run(t, env, "head", map[string]any{"file": "rel-link.txt"})
	b := run(t, env, "head", map[string]any{"file": "dangling-out.txt"})
	if strings.ReplaceAll(a, "rel-link.txt", "X") != strings.ReplaceAll(b, "dangling-out.txt", "X") {
		t.Errorf("errors differ for existing vs missing outside targets:\n%s\n%s", a, b)
	}
}

func TestClassifyOpenErr(t *testing.T) {
	tests := []struct {
		err  error
		want error
	}{
		{&os.PathError{Op: "openat", Path: "x", Err: syscall.ENOENT}, ErrNotFound},
		{&os.PathError{Op: "openat", Path: "x", Err: syscall.EIO}, ErrIO},
		{&os.PathError{Op: "openat", Path: "x", Err: syscall.EACCES}, ErrIO},
		{&os.PathError{Op: "openat", Path: "x", Err: syscall.ELOOP}, ErrOutsideRoot},
		{&os.PathError{Op: "openat", Path: "/outside/x", Err: errors.New("path escapes from parent")}, ErrOutsideRoot},
	}
	for _, tc := range tests {
		got := classifyOpenErr(tc.err)
		if !errors.Is(got, tc.want) {
			t.Errorf("classifyOpenErr(%v) = %v, want %v", tc.err, got, tc.want)
		}
		if strings.Contains(got.Error(), "/outside") {
			t.Errorf("classifyOpenErr(%v) leaks the path: %v", tc.err, got)
		}
	}
	// An I/O error reaches the model as io_error, not file_not_found.
	c := &call{file: "x.log"}
	if got := errCode(text(*c.fileError(fmt.Errorf("%w: read: %v", ErrIO, syscall.EIO)))); got != "io_error" {
		t.Errorf("I/O error reported as %q", got)
	}
}

func TestPagination(t *testing.T) {
	dir := t.TempDir()
	var items []string
	for i := range 10 {
		items = append(items, fmt.Sprintf(`{"id": %d, "s": "line a\nline b\nline c"}`, i))
	}
	writeFile(t, filepath.Join(dir, "l.json"), `{"items": [`+strings.Join(items, ",")+`], "text": "a\nb\nc\nd\n"}`)
	env := dirEnv(t, dir)
	type win struct {
		off, lim any
		want     string // footer window text
		rows     int
	}
	tests := []win{
		{0, 3, "items [0..3) of 10 total", 3},
		{nil, nil, "(10 items,", 10},
		{7, 3, "items [7..10) of 10 total", 3},
		{8, 5, "items [8..10) of 10 total", 2},            // limit overflow
		{10, 5, "items [10..10) of 10 total", 0},          // offset == len
		{25, 5, "items [10..10) of 10 total", 0},          // offset > len
		{0, maxPosition, "items [0..10) of 10 total", 10}, // the largest limit
		{4, nil, "items [4..10) of 10 total", 6},          // offset only
		{nil, 2, "items [0..2) of 10 total", 2},           // limit only
		{3, 0, "items [3..3) of 10 total", 0},             // zero limit
	}
	for _, tc := range tests {
		args := map[string]any{"file": "l.json", "path": "items", "fields": "id"}
		if tc.off != nil {
			args["offset"] = tc.off
		}
		if tc.lim != nil {
			args["limit"] = tc.lim
		}
		got := run(t, env, "iterate_over", args)
		if !strings.Contains(got, tc.want) || strings.Count(got, `"_index"`) != tc.rows {
			t.Errorf("iterate_over offset=%v limit=%v: want %q and %d rows, got:\n%s", tc.off, tc.lim, tc.want, tc.rows, got)
		}
		if tc.rows == 0 && !strings.HasPrefix(got, "[]\n") {
			t.Errorf("empty window should be []: %s", got)
		}
		if tc.off != nil && tc.rows > 0 && !strings.Contains(got, fmt.Sprintf(`{"_index":%v,`, tc.off)) {
			t.Errorf("_index must be absolute (offset %v): %s", tc.off, got)
		}
		delete(args, "fields")
		is := run(t, env, "item_schema", args)
		if errCode(is) != "" || !strings.Contains(is, tc.want) {
			t.Errorf("item_schema offset=%v limit=%v: %s", tc.off, tc.lim, is)
		}
		gi := run(t, env, "get_in", args)
		if errCode(gi) != "" || (tc.off != nil || tc.lim != nil) && !strings.Contains(gi, tc.want) {
			t.Errorf("get_in offset=%v limit=%v: %s", tc.off, tc.lim, gi)
		}
	}
	// String values page by line.
	got := run(t, env, "get_in", map[string]any{"file": "l.json", "path": "text", "offset": 3, "limit": 10})
	if !strings.HasPrefix(got, "d\n--- get_in: $.text (string, lines [3..4) of 4 total)") {
		t.Errorf("string window: %s", got)
	}
	got = run(t, env, "get_in", map[string]any{"file": "l.json", "path": "text", "offset": 9})
	if !strings.HasPrefix(got, "--- get_in: $.text (string, lines [4..4) of 4 total)") {
		t.Errorf("string window past end: %s", got)
	}
	for _, bad := range []map[string]any{{"offset": -1}, {"limit": -2}, {"offset": 1.5}, {"limit": "x"}, {"limit": 1 << 40}, {"offset": maxPosition + 1}} {
		args := map[string]any{"file": "l.json", "path": "items", "fields": "id"}
		for k, v := range bad {
			args[k] = v
		}
		if c := errCode(run(t, env, "iterate_over", args)); c != "invalid_arguments" {
			t.Errorf("iterate_over %v: code %q, want invalid_arguments", bad, c)
		}
	}
}

// TestDeepNesting: 10,000 levels must not blow the stack in any tool.
func TestDeepNesting(t *testing.T) {
	const depth = 10000
	dir := t.TempDir()
	arr := strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
	obj := strings.Repeat(`{"a":`, depth) + "true" + strings.Repeat("}", depth)
	writeFile(t, filepath.Join(dir, "arr.json"), arr)
	writeFile(t, filepath.Join(dir, "obj.json"), obj)
	writeFile(t, filepath.Join(dir, "deep.ndjson"), obj+"\n"+obj+"\n")
	env := dirEnv(t, dir)
	env.MaxExtractionTokens = 1 << 20
	deepPath := strings.TrimSuffix(strings.Repeat("a.", 1000), ".")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"schema", map[string]any{"file": "arr.json", "max_depth": maxDepthArg}},
		{"schema", map[string]any{"file": "obj.json", "max_depth": maxDepthArg}},
		{"schema", map[string]any{"file": "deep.ndjson"}},
		{"get_in", map[string]any{"file": "arr.json", "path": "$"}},
		{"get_in", map[string]any{"file": "obj.json", "path": deepPath}},
		{"get_in", map[string]any{"file": "obj.json", "path": "$", "offset": 0, "limit": 1}},
		{"item_schema", map[string]any{"file": "arr.json", "path": "$"}},
		{"item_schema", map[string]any{"file": "deep.ndjson", "path": "$"}},
		{"iterate_over", map[string]any{"file": "deep.ndjson", "path": "$", "fields": deepPath}},
		{"grep", map[string]any{"file": "obj.json", "pattern": "true"}},
		{"head", map[string]any{"file": "arr.json"}},
		{"read", map[string]any{"file": "obj.json"}},
	}
	for _, c := range calls {
		got := run(t, env, c.tool, c.args)
		if code := errCode(got); code != "" && !strings.HasSuffix(code, "_too_large") {
			t.Errorf("%s %v: %s", c.tool, c.args["file"], got[:min(len(got), 300)])
		}
	}
	// Past 10,000 levels (millions deep, as a hostile upstream could
	// send): not JSON records, and no tool dies of a stack overflow on
	// them, whatever it answers.
	abyss := strings.Repeat("[ ", 12<<20)
	writeFile(t, filepath.Join(dir, "abyss.ndjson"), abyss+"\n"+abyss+"\n")
	writeFile(t, filepath.Join(dir, "abyss.txt"), abyss+"\n"+abyss+"\n")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	defer func() {
		// Nor is the depth paid for in memory (a frame a level was 6 GB).
		runtime.ReadMemStats(&after)
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<30 {
			t.Errorf("exploring 100 MB of deep brackets allocated %d MiB", grew>>20)
		}
	}()
	for _, f := range []string{"abyss.ndjson", "abyss.txt"} {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"schema", map[string]any{}}, {"item_schema", map[string]any{"path": "$"}},
			{"iterate_over", map[string]any{"path": "$", "fields": "a"}}, {"head", map[string]any{}},
			{"grep", map[string]any{"pattern": "x"}},
		} {
			c.args["file"] = f
			if got := run(t, env, c.tool, c.args); errCode(got) == "invalid_arguments" {
				t.Errorf("%s %s: %s", c.tool, f, got)
			}
		}
	}
}

// TestSuggestionsRunnable: every suggestion of every structured error in
// the golden cases is a complete call that runs without an argument or path
// error.
func TestSuggestionsRunnable(t *testing.T) {
	for _, tc := range goldenCases {
		env := fixtureEnv(t)
		env.MaxExtractionTokens = tc.max
		got := run(t, env, tc.tool, tc.args)
		if errCode(got) == "" {
			continue
		}
		var o struct {
			Suggestions []struct {
				Tool      string         `json:"tool"`
				Arguments map[string]any `json:"arguments"`
			} `json:"suggestions"`
		}
		if err := json.Unmarshal([]byte(got), &o); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, s := range o.Suggestions {
			r := run(t, fixtureEnv(t), s.Tool, s.Arguments)
			switch errCode(r) {
			case "invalid_arguments", "invalid_path", "key_path_not_found", "unknown_tool", "file_not_found", "invalid_range", "not_an_array":
				t.Errorf("%s: suggestion %s %v fails: %s", tc.name, s.Tool, s.Arguments, r)
			}
			// Under the same cap, it fits.
			if strings.HasSuffix(errCode(got), "_too_large") {
				if code := errCode(run(t, env, s.Tool, s.Arguments)); strings.HasSuffix(code, "_too_large") {
					t.Errorf("%s: suggestion %s %v is itself too large", tc.name, s.Tool, s.Arguments)
				}
			}
		}
	}
}

func TestIterateOverTooLargeLeadsWithHalfWindow(t *testing.T) {
	env := fixtureEnv(t)
	env.MaxExtractionTokens = 30
	got := run(t, env, "iterate_over", map[string]any{"file": "nested.json", "path": "results", "fields": "id,title", "offset": 2, "limit": 8})
	var o struct {
		Error       string `json:"error"`
		Limit       int    `json:"per_call_limit"`
		Suggestions []struct {
			Tool      string         `json:"tool"`
			Arguments map[string]any `json:"arguments"`
		} `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(got), &o); err != nil {
		t.Fatal(err, got)
	}
	if len(o.Suggestions) == 0 {
		t.Fatalf("no suggestion: %s", got)
	}
	first := o.Suggestions[0]
	if lim, _ := first.Arguments["limit"].(float64); o.Error != "iterate_over_too_large" || o.Limit != 30 || first.Tool != "iterate_over" ||
		first.Arguments["offset"] != 2.0 || lim < 1 || lim > 4 || first.Arguments["fields"] != "id,title" {
		t.Errorf("first suggestion is not the same rows in a window that fits: %s", got)
	}
	tools := []string{}
	for _, s := range o.Suggestions {
		tools = append(tools, s.Tool)
		if code := errCode(run(t, env, s.Tool, s.Arguments)); code != "" {
			t.Errorf("suggestion %s %v answers %s", s.Tool, s.Arguments, code)
		}
	}
	if tools[0] != "iterate_over" || tools[len(tools)-1] != "grep" {
		t.Errorf("suggestion order %v, want the paginated retry first, grep last", tools)
	}
}

// TestTooLargeCountsExactly: read, head and slice refuse a 5 MB log with
// its real token count, not bytes/4 (which said 1,310,735 for a log of
// 2,063,141 tokens), and read still refuses on the budget.
func TestTooLargeCountsExactly(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	rng := rand.New(rand.NewPCG(38, 2))
	levels := []string{"INFO", "WARN", "ERROR", "DEBUG"}
	for i := 0; b.Len() < 5<<20; i++ {
		fmt.Fprintf(&b, "2026-12-02T14:%02d:%02d.%03dZ %s req=%016x path=/api/v1/items/%d status=%d dur=%dms user=u%d\n",
			i/60%60, i%60, rng.IntN(1000), levels[rng.IntN(4)], rng.Uint64(), rng.IntN(100000), 200+rng.IntN(4)*100, rng.IntN(5000), rng.IntN(1000))
	}
	log := b.String()
	writeFile(t, filepath.Join(dir, "big.log"), log)
	counter, err := tokens.ForEncoding(tokens.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	env := dirEnv(t, dir)
	env.Count = counter.CountString
	want := counter.CountString(log)
	lines := strings.Count(log, "\n")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want int
	}{
		{"read", map[string]any{"file": "big.log"}, want},
		// head and slice count the lines' text, which alone is over the cap.
		{"head", map[string]any{"file": "big.log", "lines": lines}, want},
		{"slice", map[string]any{"file": "big.log", "start": 1, "end": lines}, want},
	} {
		got := run(t, env, tc.tool, tc.args)
		var e struct {
			Error     string `json:"error"`
			Message   string `json:"message"`
			Estimated int    `json:"estimated_tokens"`
		}
		if err := json.Unmarshal([]byte(got), &e); err != nil || e.Error != tc.tool+"_too_large" {
			t.Fatalf("%s of a 5 MB log: %v %.300s", tc.tool, err, got)
		}
		if e.Estimated != tc.want {
			t.Errorf("%s: estimated_tokens %d, the counter says %d for the file (bytes/4: %d)", tc.tool, e.Estimated, want, len(log)/4)
		}
		if !strings.Contains(e.Message, "would be "+Comma(e.Estimated)+" tokens,") {
			t.Errorf("%s: the message does not state the count %d: %s", tc.tool, e.Estimated, e.Message)
		}
		t.Logf("%s: %d tokens (bytes/4 said %d; counter on the file %d)", tc.tool, e.Estimated, len(log)/4, want)
	}
	env.Budget = &fakeBudget{total: 100000, left: 10}
	env.MaxExtractionTokens = 1 << 22
	if got := run(t, env, "read", map[string]any{"file": "big.log"}); !strings.Contains(got, `"remaining_budget_tokens":10`) || !strings.Contains(got, fmt.Sprintf(`"estimated_tokens":%d`, want)) {
		t.Errorf("read over budget: %.300s", got)
	}
}

func TestBudgetCharging(t *testing.T) {
	env := fixtureEnv(t)
	b := &fakeBudget{total: 1000, left: 1000}
	env.Budget = b
	got := run(t, env, "head", map[string]any{"file": "app.log", "lines": 2})
	m := regexp.MustCompile(`~(\d+) tokens, ~([\d,]+) left of 1,000 ---$`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("footer: %s", got)
	}
	if n := wordCount(got); fmt.Sprint(n) != m[1] || b.left != 1000-n || fmt.Sprint(b.left) != strings.ReplaceAll(m[2], ",", "") {
		t.Errorf("footer says %s tokens/%s left; counted %d, budget left %d", m[1], m[2], n, b.left)
	}
	before := b.left
	b.left = 5
	if c := errCode(run(t, env, "head", map[string]any{"file": "app.log", "lines": 2})); c != "head_too_large" || b.left != 5 {
		t.Errorf("over budget: code %q, left %d (must charge nothing)", c, b.left)
	}
	b.left = before
	if c := errCode(run(t, env, "get_in", map[string]any{"file": "nested.json", "path": "nope"})); c != "key_path_not_found" || b.left != before {
		t.Errorf("errors must not be charged: left %d, want %d", b.left, before)
	}
}

func TestCache(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	writeFile(t, p, `{"v": 1}`)
	env := dirEnv(t, dir)
	env.Cache = NewCache(1 << 20)
	if got := run(t, env, "get_in", map[string]any{"file": "a.json", "path": "v"}); !strings.HasPrefix(got, "1\n") {
		t.Fatal(got)
	}
	// Same size, new mtime: must not be served stale.
	writeFile(t, p, `{"v": 2}`)
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	if got := run(t, env, "get_in", map[string]any{"file": "a.json", "path": "v"}); !strings.HasPrefix(got, "2\n") {
		t.Errorf("stale after rewrite: %s", got)
	}
	// Byte budget: the least recently used file goes first.
	small := NewCache(300)
	env.Cache = small
	for _, n := range []string{"x", "y", "z"} {
		writeFile(t, filepath.Join(dir, n+".txt"), strings.Repeat(n, 100)+"\n")
		run(t, env, "head", map[string]any{"file": n + ".txt"})
	}
	if small.Len() != 2 {
		t.Errorf("cache holds %d files, want 2 within 300 bytes", small.Len())
	}
	writeFile(t, filepath.Join(dir, "huge.txt"), strings.Repeat("h", 1000))
	run(t, env, "head", map[string]any{"file": "huge.txt"})
	if small.Len() != 2 {
		t.Errorf("a file larger than the budget must not be cached (len %d)", small.Len())
	}
	var nilCache *Cache
	nilCache.put("k", 1, time.Now(), &doc{})
	if nilCache.get("k", 1, time.Now()) != nil {
		t.Error("nil cache returned a doc")
	}
}

// TestGrepMatchers: the fast paths (literal, case-folded literal, required
// literal + verify, multiline candidate + verify) find exactly the lines a
// per-line regexp finds.
func TestGrepMatchers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"error", "Error", "ERROR", "timeout", "took", "12ms", "x", "", "  ", "a.b", "é", "(", "[", "\t"}
	var lines []string
	for range 400 {
		var w []string
		for range rng.IntN(6) {
			w = append(w, words[rng.IntN(len(words))])
		}
		lines = append(lines, strings.Join(w, " "))
	}
	data := strings.Join(lines, "\n") + "\n"
	d := newDoc("t.txt", "t.txt", []byte(data))
	patterns := []string{"error", "ERROR", "timeout", "took [0-9]+ms", `^error`, `x$`, `(error|timeout)`, `o\s+t`, `[0-9]{2}`, "é", `a\.b`, `a.b`, "rror t", `\d+ms\s*$`, `^$`}
	for _, p := range patterns {
		for _, ic := range []bool{false, true} {
			flags := ""
			if ic {
				flags = "(?i)"
			}
			ref := regexp.MustCompile(flags + p)
			var want []int
			for i, l := range lines {
				if ref.MatchString(l) {
					want = append(want, i+1)
				}
			}
			m, lit, _ := compileGrep(p, ic, d.data)
			if lit {
				t.Fatalf("%q treated as invalid", p)
			}
			hits, total, _ := grepLines(context.Background(), d, m, 1<<30)
			got := hitLines(d, hits)
			if fmt.Sprint(got) != fmt.Sprint(want) || total != len(want) {
				t.Errorf("pattern %q ic=%v (%T): got %v (total %d), want %v", p, ic, m, got, total, want)
			}
		}
	}
	// Invalid regexps are searched literally.
	for _, p := range []string{"(", "[", "a(b", `x\`} {
		m, lit, msg := compileGrep(p, false, d.data)
		if !lit || msg == "" {
			t.Errorf("%q: literal fallback not reported", p)
		}
		hits, _, _ := grepLines(context.Background(), d, m, 1<<30)
		got := hitLines(d, hits)
		var want []int
		for i, l := range lines {
			if strings.Contains(l, p) {
				want = append(want, i+1)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("literal %q: got %v want %v", p, got, want)
		}
	}
}

func TestGrepLongLineClipped(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "min.json"), `{"a":"`+strings.Repeat("x", 100000)+`NEEDLE`+strings.Repeat("y", 100000)+`"}`)
	env := dirEnv(t, dir)
	got := run(t, env, "grep", map[string]any{"file": "min.json", "pattern": "NEEDLE"})
	if !strings.Contains(got, "NEEDLE") || len(got) > 2000 || !strings.Contains(got, "bytes]") {
		t.Errorf("long line not clipped around the match (%d bytes): %.300s", len(got), got)
	}
}

// snapshot renders defs as tools/list shows them: top-level keys sorted,
// as MCP libraries encode a tool.
func snapshot(t *testing.T, defs []tool.Def) []byte {
	t.Helper()
	list := make([]map[string]json.RawMessage, len(defs))
	for i, d := range defs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &list[i]); err != nil {
			t.Fatal(err)
		}
	}
	got, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(got, '\n')
}

func TestToolsSnapshot(t *testing.T) {
	defs := Tools(nil)
	got := snapshot(t, defs)
	path := filepath.Join(fixtures, "golden", "tools.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("Tools() changed; if intended, run go test ./explore -run TestToolsSnapshot -update\n%s", got)
	}
	for _, d := range defs {
		if d.Annotations.ReadOnly == nil || !*d.Annotations.ReadOnly {
			t.Errorf("%s is not readOnlyHint", d.Name)
		}
		if _, ok := byName[d.Name]; !ok || d.Handler == nil {
			t.Errorf("%s has no handler", d.Name)
		}
	}
	if len(defs) != 9 {
		t.Errorf("%d tools, want 9", len(defs))
	}
}

// TestToolHandlers calls a tool the way a server adapter does: raw JSON
// arguments, the session's Env resolved by envFor.
func TestToolHandlers(t *testing.T) {
	env := fixtureEnv(t)
	byName := func(defs []tool.Def, name string) tool.Def {
		for _, d := range defs {
			if d.Name == name {
				return d
			}
		}
		t.Fatalf("no tool %s", name)
		return tool.Def{}
	}
	args := json.RawMessage(`{"file":"nested.json","path":"results.0.id"}`)
	getIn := byName(Tools(func(ctx context.Context) (*Env, error) { return env, nil }), ToolGetIn)
	if res := getIn.Handler(context.Background(), args); res.IsError || !strings.Contains(res.Text, "1\n--- get_in: $.results[0].id (number)") {
		t.Errorf("get_in through its handler: %+v", res)
	}
	if res := getIn.Handler(context.Background(), json.RawMessage(`[1]`)); errCode(res.Text) != "invalid_arguments" {
		t.Errorf("arguments not an object: %+v", res)
	}
	if res := getIn.Handler(context.Background(), nil); errCode(res.Text) != "invalid_arguments" || !strings.Contains(res.Text, "file is required") {
		t.Errorf("no arguments: %+v", res)
	}
	failing := byName(Tools(func(ctx context.Context) (*Env, error) { return nil, errors.New("no session") }), ToolGetIn)
	if res := failing.Handler(context.Background(), args); !res.IsError || res.Text != "no session" {
		t.Errorf("envFor error: %+v", res)
	}
}

func TestNDJSONBadRecord(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "e.ndjson"), "{\"a\":1}\n\n{\"a\":2\n{\"a\":3}\n")
	env := dirEnv(t, dir)
	if got := run(t, env, "get_in", map[string]any{"file": "e.ndjson", "path": "[2].a"}); !strings.HasPrefix(got, "3\n") {
		t.Errorf("blank lines are not records: %s", got)
	}
	got := run(t, env, "get_in", map[string]any{"file": "e.ndjson", "path": "[1].a"})
	if errCode(got) != "invalid_json" || !strings.Contains(got, "line 3") {
		t.Errorf("bad record: %s", got)
	}
	got = run(t, env, "iterate_over", map[string]any{"file": "e.ndjson", "path": "$", "fields": "a"})
	if !strings.Contains(got, `{"_index":1,"_error":"record on line 3 is not valid JSON"}`) || !strings.Contains(got, `{"_index":2,"a":3}`) {
		t.Errorf("iterate_over over a bad record: %s", got)
	}
}

func TestNoRoot(t *testing.T) {
	for _, env := range []*Env{nil, {}, {Count: wordCount}} {
		if c := errCode(text(Call(context.Background(), env, "head", map[string]any{"file": "x"}))); c != "no_read_root" {
			t.Errorf("env %+v: code %q", env, c)
		}
	}
}

// TestConcurrentCalls: agents share one cache; big containers get indexed
// while others read them (run with -race).
func TestConcurrentCalls(t *testing.T) {
	dir := t.TempDir()
	var items []string
	for i := range 3000 {
		items = append(items, fmt.Sprintf(`{"id": %d, "name": "n%d"}`, i, i))
	}
	writeFile(t, filepath.Join(dir, "big.json"), `{"items": [`+strings.Join(items, ",\n")+`]}`)
	env := dirEnv(t, dir)
	env.Cache = NewCache(64 << 20)
	env.Budget = &fakeBudget{total: 1 << 30, left: 1 << 30}
	done := make(chan string)
	for g := range 8 {
		go func() {
			i := g * 300
			got := run(t, env, "iterate_over", map[string]any{"file": "big.json", "path": "items", "fields": "id", "offset": i, "limit": 2})
			if !strings.Contains(got, fmt.Sprintf(`{"_index":%d,"id":%d}`, i, i)) {
				done <- got
				return
			}
			done <- ""
		}()
	}
	for range 8 {
		if s := <-done; s != "" {
			t.Error(s)
		}
	}
}

// FuzzIndexJSON: the single-pass validator agrees with encoding/json on
// what is valid, and its member lists equal the scanner's.
func FuzzIndexJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}],"c":"x\"y"}`, `[1,]`, `{"a" 1}`, `-0.5e+3`, `"\u12g4"`, `[[[[]]]]`, `{"a":1}x`, "\"\x01\"", `01`, ` true `, `[1 2]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kids, off, msg := indexJSON(b, 0)
		valid := json.Valid(b)
		if (msg == "") != valid {
			t.Fatalf("indexJSON(%q): err %q at %d, encoding/json valid=%v", b, msg, off, valid)
		}
		if !valid {
			if off < 0 || off > len(b) {
				t.Fatalf("error offset %d out of range", off)
			}
			return
		}
		if s, e := jsonscan.SkipSpace(b, 0), len(bytes.TrimRight(b, " \t\r\n")); jsonscan.ValueEnd(b, s) != e {
			t.Fatalf("jsonscan.ValueEnd(%q) = %d, want %d", b, jsonscan.ValueEnd(b, s), e)
		}
		for start, k := range kids {
			end := jsonscan.ValueEnd(b, start)
			want := scanChildren(b, span{start, end})
			if fmt.Sprint(want) != fmt.Sprint(k) {
				t.Fatalf("container at %d of %q: index %v, scanner %v", start, b, k, want)
			}
		}
	})
}

func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "x.log"), strings.Repeat("hit\n", 5000))
	var items []string
	for i := range 3000 {
		items = append(items, fmt.Sprintf(`{"i":%d}`, i))
	}
	writeFile(t, filepath.Join(dir, "a.json"), "["+strings.Join(items, ",")+"]")
	env := dirEnv(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"grep", map[string]any{"file": "x.log", "pattern": "hit"}},
		{"item_schema", map[string]any{"file": "a.json", "path": "$"}},
		{"count_by", map[string]any{"file": "a.json", "path": "$", "group_by": "i"}},
		{"iterate_over", map[string]any{"file": "a.json", "path": "$", "fields": "i", "filter": "@.i > 1"}},
		{"grep", map[string]any{"pattern": "hit"}},
	} {
		if got := errCode(text(Call(ctx, env, c.tool, c.args))); got != "cancelled" {
			t.Errorf("%s with a cancelled context: %q", c.tool, got)
		}
	}
}

// TestScanStringWordBoundaries: the 8-bytes-at-a-time string scan finds a
// quote, backslash or control byte at every offset within and across words.
func TestScanStringWordBoundaries(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", `\x`, "é", "\x7f"}
	for k := range 24 {
		for _, sp := range specials {
			for _, tail := range []string{`"`, `abcdefghijklmnop"`, ``} {
				s := `"` + strings.Repeat("a", k) + sp + tail
				_, _, msg := indexJSON([]byte(s), 0)
				if (msg == "") != json.Valid([]byte(s)) {
					t.Errorf("%q: indexJSON error %q, encoding/json valid=%v", s, msg, json.Valid([]byte(s)))
				}
			}
		}
	}
}

// hitLines returns the hits' line numbers, checking each against the line
// index and its text.
func hitLines(d *doc, hits []hit) []int {
	var out []int
	for _, h := range hits {
		if d.lineOf(h.start) != h.line || string(d.line(h.line)) != string(bytes.TrimSuffix(d.data[h.start:h.end], []byte{'\r'})) {
			return []int{-1, h.line}
		}
		out = append(out, h.line)
	}
	return out
}

// TestGrepContextLines: context lines walked from the hits equal the lines
// of the index, at the start and end of the file and with CRLF endings,
// each once, in order, with a gap where windows do not touch.
func TestGrepContextLines(t *testing.T) {
	for _, data := range []string{"a\nb\nhit\nc\nd\n", "hit\nx\nhit", "x\r\nhit\r\ny\r\n", "hit", "\n\nhit\n\n", "hit\na\nb\nc\nd\ne\nf\nhit\n"} {
		d := newDoc("t.txt", "t.txt", []byte(data))
		m, _, _ := compileGrep("hit", false, nil)
		hits, _, _ := grepLines(context.Background(), d, m, 10)
		for ctx := range 5 {
			want := map[int]bool{}
			for _, h := range hits {
				for n := max(1, h.line-ctx); n <= min(d.lineCount(), h.line+ctx); n++ {
					want[n] = true
				}
			}
			last := 0
			err := d.contextWalk(context.Background(), hits, ctx, func(n int, l []byte, match, gap bool) {
				if n <= last || !want[n] || string(l) != string(d.line(n)) {
					t.Errorf("%q ctx %d: line %d = %q after line %d, want %q", data, ctx, n, l, last, d.line(max(1, min(n, d.lineCount()))))
				}
				if isHit := strings.HasPrefix(string(l), "hit"); match != isHit || gap != (last > 0 && n > last+1) {
					t.Errorf("%q ctx %d: line %d match %v gap %v", data, ctx, n, match, gap)
				}
				delete(want, n)
				last = n
			})
			if err != nil || len(want) > 0 {
				t.Errorf("%q ctx %d: %v; lines not walked: %v", data, ctx, err, want)
			}
		}
		if d.countLines() != d.lineCount() {
			t.Errorf("%q: countLines %d, lineCount %d", data, d.countLines(), d.lineCount())
		}
	}
}
