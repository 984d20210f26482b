package explore

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/explore/golden")

const fixtures = "../testdata/explore"

// fakeBudget is a Budget with a fixed total, safe for concurrent use.
type fakeBudget struct {
	mu          sync.Mutex
	total, left int
}

func (b *fakeBudget) Remaining() int { b.mu.Lock(); defer b.mu.Unlock(); return b.left }
func (b *fakeBudget) Total() int     { return b.total }
func (b *fakeBudget) TryCharge(n int) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return b.left, false
	}
	b.left -= n
	return b.left, true
}

func fixtureEnv(t testing.TB) *Env {
	t.Helper()
	root, err := os.OpenRoot(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &Env{Root: root, Count: wordCount}
}

// goldenCases pin the exact text models see: footers, windows and every
// structured error object.
var goldenCases = []struct {
	name   string
	tool   string
	args   map[string]any
	max    int // MaxExtractionTokens; 0 = default
	budget *fakeBudget
}{
	{"head_default", "head", map[string]any{"file": "app.log", "lines": 3}, 0, nil},
	{"head_all", "head", map[string]any{"file": "table.tsv"}, 0, nil},
	{"head_budget", "head", map[string]any{"file": "app.log", "lines": 2}, 0, &fakeBudget{total: 102400, left: 61200}},
	{"head_minified_too_large", "head", map[string]any{"file": "minified.json"}, 5, nil},
	{"head_too_large", "head", map[string]any{"file": "app.log", "lines": 40}, 100, nil},
	{"head_over_budget", "head", map[string]any{"file": "app.log", "lines": 40}, 0, &fakeBudget{total: 1000, left: 50}},
	{"slice", "slice", map[string]any{"file": "app.log", "start": 9, "end": 11}, 0, nil},
	{"slice_past_end", "slice", map[string]any{"file": "app.log", "start": 41, "end": 50}, 0, nil},
	{"slice_clamped", "slice", map[string]any{"file": "app.log", "start": 39, "end": 500}, 0, nil},
	{"slice_bad_range", "slice", map[string]any{"file": "app.log", "start": 5, "end": 4}, 0, nil},
	{"slice_too_large", "slice", map[string]any{"file": "app.log", "start": 1, "end": 40}, 100, nil},
	{"grep_regex", "grep", map[string]any{"file": "app.log", "pattern": "ERROR|took 2[0-9]ms", "context": 1}, 0, nil},
	{"grep_max_matches", "grep", map[string]any{"file": "app.log", "pattern": "WARN", "context": 0, "max_matches": 2}, 0, nil},
	{"grep_ignore_case", "grep", map[string]any{"file": "app.log", "pattern": "error worker-1", "ignore_case": true, "context": 0}, 0, nil},
	{"grep_invalid_regex", "grep", map[string]any{"file": "nested.json", "pattern": `"tags": [`, "context": 0, "max_matches": 3}, 0, nil},
	{"grep_no_match", "grep", map[string]any{"file": "app.log", "pattern": "panic"}, 0, nil},
	{"grep_too_large", "grep", map[string]any{"file": "app.log", "pattern": "INFO"}, 100, nil},
	{"schema_json", "schema", map[string]any{"file": "nested.json"}, 0, nil},
	{"schema_json_depth2", "schema", map[string]any{"file": "nested.json", "max_depth": 2}, 0, nil},
	{"schema_ndjson", "schema", map[string]any{"file": "events.ndjson"}, 0, nil},
	{"schema_markdown", "schema", map[string]any{"file": "doc.md"}, 0, nil},
	{"schema_csv", "schema", map[string]any{"file": "table.csv"}, 0, nil},
	{"schema_tsv", "schema", map[string]any{"file": "table.tsv"}, 0, nil},
	{"schema_text", "schema", map[string]any{"file": "app.log"}, 0, nil},
	{"schema_broken", "schema", map[string]any{"file": "broken.json"}, 0, nil},
	{"schema_too_large", "schema", map[string]any{"file": "nested.json"}, 50, nil},
	{"item_schema", "item_schema", map[string]any{"file": "nested.json", "path": "results", "offset": 2, "limit": 4}, 0, nil},
	{"item_schema_too_large", "item_schema", map[string]any{"file": "nested.json", "path": "results"}, 40, nil},
	{"item_schema_full", "item_schema", map[string]any{"file": "events.ndjson", "path": "$"}, 0, nil},
	{"item_schema_not_array", "item_schema", map[string]any{"file": "nested.json", "path": "$"}, 0, nil},
	{"get_in_dollar", "get_in", map[string]any{"file": "nested.json", "path": "$.results[3].metadata.author.login"}, 0, nil},
	{"get_in_dotted", "get_in", map[string]any{"file": "nested.json", "path": "results.3.metadata"}, 0, nil},
	{"get_in_quoted_key", "get_in", map[string]any{"file": "nested.json", "path": `$["weird keys"]["a.b"]`}, 0, nil},
	{"get_in_string_lines", "get_in", map[string]any{"file": "nested.json", "path": "notes", "offset": 1, "limit": 2}, 0, nil},
	{"get_in_window", "get_in", map[string]any{"file": "nested.json", "path": "results", "offset": 10, "limit": 5}, 0, nil},
	{"get_in_ndjson", "get_in", map[string]any{"file": "events.ndjson", "path": "[5].extra"}, 0, nil},
	{"get_in_missing_key", "get_in", map[string]any{"file": "nested.json", "path": "$.results[3].metadata.nmae"}, 0, nil},
	{"get_in_index_out_of_range", "get_in", map[string]any{"file": "nested.json", "path": "results[12].id"}, 0, nil},
	{"get_in_into_scalar", "get_in", map[string]any{"file": "nested.json", "path": "total_count.value"}, 0, nil},
	{"get_in_key_on_array", "get_in", map[string]any{"file": "nested.json", "path": "results.id"}, 0, nil},
	{"get_in_bad_path", "get_in", map[string]any{"file": "nested.json", "path": "results[abc"}, 0, nil},
	{"get_in_not_json", "get_in", map[string]any{"file": "app.log", "path": "a"}, 0, nil},
	{"get_in_broken_json", "get_in", map[string]any{"file": "broken.json", "path": "a"}, 0, nil},
	{"get_in_too_large", "get_in", map[string]any{"file": "nested.json", "path": "results"}, 100, nil},
	{"iterate_over", "iterate_over", map[string]any{"file": "nested.json", "path": "$.results", "fields": "id,title", "offset": 3, "limit": 4}, 0, &fakeBudget{total: 102400, left: 61200}},
	{"iterate_over_full", "iterate_over", map[string]any{"file": "events.ndjson", "path": "$", "fields": "level,attrs.n,extra[1]"}, 0, nil},
	{"iterate_over_past_end", "iterate_over", map[string]any{"file": "nested.json", "path": "results", "fields": "id", "offset": 99, "limit": 5}, 0, nil},
	{"iterate_over_too_large", "iterate_over", map[string]any{"file": "nested.json", "path": "results", "fields": "id,title,metadata", "offset": 0, "limit": 12}, 20, nil},
	{"iterate_over_bad_args", "iterate_over", map[string]any{"file": "nested.json", "path": "results", "limit": -1, "colour": "red"}, 0, nil},
	{"iterate_over_filter_sort", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name,status.phase,status.restartCount", "filter": "?(@.status.phase == 'Failed' || @.status.phase == 'Pending')", "sort_by": "status.restartCount", "order": "desc", "limit": 5}, 0, &fakeBudget{total: 102400, left: 61200}},
	{"iterate_over_sort_only", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name,spec.priority", "sort_by": "spec.priority", "offset": 36}, 0, nil},
	{"iterate_over_filter_none", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "?(@.status.phase == 'Lost')"}, 0, nil},
	{"iterate_over_filter_ndjson", "iterate_over", map[string]any{"file": "events.ndjson", "path": "$", "fields": "msg,attrs.n", "filter": "@.level == 'error' && @.attrs.n > 4"}, 0, nil},
	{"iterate_over_filter_too_large", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata,spec", "filter": "?(@.status.phase == 'Running')"}, 100, nil},
	{"get_in_filter", "get_in", map[string]any{"file": "pods.json", "path": "items", "filter": "?(@.spec.containers[?(@.image =~ /^redis/)] && @.status.phase != 'Running')", "limit": 1}, 0, nil},
	{"get_in_filter_not_array", "get_in", map[string]any{"file": "pods.json", "path": "metadata", "filter": "?(@ == 1)"}, 0, nil},
	{"bad_filter_fixed", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "status.phase = 'Failed' and spec.priority > 1", "limit": 10}, 0, nil},
	{"bad_filter_example", "get_in", map[string]any{"file": "pods.json", "path": "items", "filter": "?(@.status.phase == 'Failed' &&)"}, 0, nil},
	{"filter_key_not_found", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "?(@.status.phse == 'Failed')"}, 0, nil},
	{"sort_by_key_not_found", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "sort_by": "metadata.nmae"}, 0, nil},
	{"iterate_over_bad_order", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "sort_by": "metadata.name", "order": "up"}, 0, nil},
	{"count_by", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "status.phase"}, 0, &fakeBudget{total: 102400, left: 61200}},
	{"count_by_two_fields_filter_top", "count_by", map[string]any{"file": "pods.json", "path": "$.items", "group_by": "metadata.namespace,status.phase", "filter": "?(@.status.phase != 'Running')", "top": 3}, 0, nil},
	{"count_by_distinct", "count_by", map[string]any{"file": "pods.json", "path": "items", "distinct": "spec.containers[*].image"}, 0, nil},
	{"count_by_distinct_numeric", "count_by", map[string]any{"file": "pods.json", "path": "items", "distinct": "status.restartCount"}, 0, nil},
	{"count_by_group_distinct", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "metadata.namespace", "distinct": "status.containerStatuses[*].restartCount"}, 0, nil},
	{"count_by_numeric_group", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "spec.priority", "top": 2}, 0, nil},
	{"count_by_ndjson", "count_by", map[string]any{"file": "events.ndjson", "path": "$", "group_by": "level"}, 0, nil},
	{"count_by_key_not_found", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "status.phse"}, 0, nil},
	{"count_by_no_fields", "count_by", map[string]any{"file": "pods.json", "path": "items"}, 0, nil},
	{"count_by_filter_only", "count_by", map[string]any{"file": "pods.json", "path": "items", "filter": "?(@.status.phase == 'Running')"}, 0, nil},
	{"count_by_lines", "count_by", map[string]any{"file": "app.log", "pattern": `(?P<worker>worker-\d+) request`, "top": 2}, 0, nil},
	{"count_by_lines_level", "count_by", map[string]any{"file": "app.log", "pattern": `\d\d (\w+) worker`}, 0, nil},
	{"count_by_lines_no_group", "count_by", map[string]any{"file": "app.log", "pattern": `ERROR`}, 0, nil},
	{"count_by_lines_with_path", "count_by", map[string]any{"file": "app.log", "pattern": `(\w+)`, "path": "$"}, 0, nil},
	{"count_by_bad_filter", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "status.phase", "filter": "?(@.metadata.name =~ /(/)"}, 0, nil},
	{"count_by_too_large", "count_by", map[string]any{"file": "pods.json", "path": "items", "group_by": "metadata.name", "top": 40}, 50, nil},
	{"count_by_not_array", "count_by", map[string]any{"file": "pods.json", "path": "metadata", "group_by": "a"}, 0, nil},
	{"iterate_over_csv_filter", "iterate_over", map[string]any{"file": "table.csv", "path": "$", "fields": "name,price", "filter": "?(@.price > 1 || @.active == false)", "sort_by": "price", "order": "desc"}, 0, nil},
	{"count_by_tsv", "count_by", map[string]any{"file": "table.tsv", "path": "$", "distinct": "qty"}, 0, nil},
	{"get_in_filter_in_path", "get_in", map[string]any{"file": "pods.json", "path": "$.items[?(@.metadata.labels.tier == 1)]"}, 0, nil},
	{"iterate_over_wildcard_field", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": `metadata.name,spec.containers[*].image,metadata.labels["app.kubernetes.io/name"]`, "filter": "?(count(@.spec.containers[*]) > 1)", "limit": 2}, 0, nil},
	{"iterate_over_exists_none", "iterate_over", map[string]any{"file": "pods.json", "path": "items", "fields": "metadata.name", "filter": "?(@.metadata.deletionTimestamp)"}, 0, nil},
	{"read", "read", map[string]any{"file": "table.tsv"}, 0, nil},
	{"read_too_large", "read", map[string]any{"file": "nested.json"}, 100, nil},
	{"file_not_found", "head", map[string]any{"file": "nope.json"}, 0, nil},
	{"file_outside_root", "head", map[string]any{"file": "../../etc/passwd"}, 0, nil},
	{"file_absolute", "read", map[string]any{"file": "/etc/passwd"}, 0, nil},
	{"unknown_tool", "tail", map[string]any{"file": "app.log"}, 0, nil},
	{"pattern_too_long", "grep", map[string]any{"file": "app.log", "pattern": string(make([]byte, 1025))}, 0, nil},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			env := fixtureEnv(t)
			env.MaxExtractionTokens = tc.max
			if tc.budget != nil {
				env.Budget = &fakeBudget{total: tc.budget.total, left: tc.budget.left}
			}
			got := text(Call(context.Background(), env, tc.tool, tc.args)) + "\n"
			path := filepath.Join(fixtures, "golden", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./explore -run TestGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s\n--- got ---\n%s--- want ---\n%s", path, got, want)
			}
		})
	}
}
