package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// viewDir writes the view tests' files: pods.json (an object holding an
// array of 50 objects), pods.ndjson (the same items as records), app.log.
func viewDir(t *testing.T) *Env {
	t.Helper()
	dir := t.TempDir()
	var items []string
	var recs []string
	for i := range 50 {
		item := fmt.Sprintf(`{"name":"pod-%02d","ns":"ns-%d","restarts":%d,"meta":{"tags":["a","b"]}}`, i, i%3, (i*7)%11)
		items = append(items, item)
		recs = append(recs, item)
	}
	writeFile(t, filepath.Join(dir, "pods.json"), `{"kind":"List","items":[`+strings.Join(items, ",\n")+`],"note":"`+strings.Repeat("x", 3000)+`"}`)
	writeFile(t, filepath.Join(dir, "pods.ndjson"), strings.Join(recs, "\n")+"\n")
	writeFile(t, filepath.Join(dir, "odd.json"), `[{"a b":2,"name":"x"},{"a b":1,"name":"y"},{"a b":3,"name":"z"}]`)
	writeFile(t, filepath.Join(dir, "app.log"), "INFO start\nWARN disk 91% (of /var)\nERROR db down\nINFO retry\nERROR db down again\n")
	return dirEnv(t, dir)
}

func TestViewItems(t *testing.T) {
	env := viewDir(t)
	cases := []struct {
		name                   string
		file                   string
		q                      ItemsQuery
		first                  string // name of the first item in the window
		n, offset, matched, of int
		index0                 int
	}{
		{"a window of an array", "pods.json", ItemsQuery{Path: "$.items", Window: Window{Offset: 10, Limit: 5}}, "pod-10", 5, 10, 50, 50, 10},
		{"filtered as the tools filter", "pods.json", ItemsQuery{Path: "$.items", Filter: "@.ns == 'ns-1'", Window: Window{Limit: 100}}, "pod-01", 17, 0, 17, 50, 1},
		{"a filter inside the path", "pods.json", ItemsQuery{Path: "$.items[?@.restarts > 8]"}, "pod-03", 9, 0, 9, 50, 3},
		{"sorted descending", "pods.json", ItemsQuery{Path: "items", SortBy: "restarts", Order: "desc", Window: Window{Limit: 1}}, "pod-03", 1, 0, 50, 50, 3},
		{"filtered and sorted, second page", "pods.json", ItemsQuery{Path: "$.items", Filter: "?@.ns == 'ns-0'", SortBy: "name", Order: "desc", Window: Window{Offset: 2, Limit: 2}}, "pod-42", 2, 2, 17, 50, 42},
		{"an NDJSON file's records", "pods.ndjson", ItemsQuery{Filter: "@.name == 'pod-49'"}, "pod-49", 1, 0, 1, 50, 49},
		{"a key that is no name, as the page's column sorts it", "odd.json", ItemsQuery{SortBy: "['a b']", Order: "desc"}, "z", 3, 0, 3, 3, 2},
		{"a window past the end", "pods.json", ItemsQuery{Path: "$.items", Window: Window{Offset: 80}}, "", 0, 50, 50, 50, 0},
		{"a window bounded by MaxViewWindow", "pods.json", ItemsQuery{Path: "$.items", Window: Window{Limit: MaxViewWindow * 9}}, "pod-00", 50, 0, 50, 50, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ViewItems(context.Background(), env, tc.file, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Items) != tc.n || len(got.Index) != tc.n || got.Offset != tc.offset || got.Matched != tc.matched || got.Total != tc.of {
				t.Fatalf("got %d items (%d indexes) at %d, %d matched of %d; want %d at %d, %d of %d", len(got.Items), len(got.Index), got.Offset, got.Matched, got.Total, tc.n, tc.offset, tc.matched, tc.of)
			}
			if tc.n == 0 {
				return
			}
			var first struct{ Name string }
			if err := json.Unmarshal(got.Items[0], &first); err != nil || first.Name != tc.first || got.Index[0] != tc.index0 {
				t.Fatalf("first item %s (index %d), want %s (index %d)", got.Items[0], got.Index[0], tc.first, tc.index0)
			}
		})
	}
}

func TestViewRefused(t *testing.T) {
	env := viewDir(t)
	cases := []struct {
		name string
		run  func() error
		code string
	}{
		{"a filter that does not parse", func() error {
			_, err := ViewItems(context.Background(), env, "pods.json", ItemsQuery{Path: "$.items", Filter: "@.ns =="})
			return err
		}, "bad_filter"},
		{"an order that is not one", func() error {
			_, err := ViewItems(context.Background(), env, "pods.json", ItemsQuery{Path: "$.items", SortBy: "name", Order: "up"})
			return err
		}, "invalid_arguments"},
		{"not an array", func() error {
			_, err := ViewItems(context.Background(), env, "pods.json", ItemsQuery{Path: "$.kind"})
			return err
		}, "not_an_array"},
		{"outside the read root", func() error {
			_, err := ViewItems(context.Background(), env, "../x.json", ItemsQuery{})
			return err
		}, "file_outside_root"},
		{"a tree of text", func() error {
			_, err := ViewNode(context.Background(), env, "app.log", "", Window{})
			return err
		}, "not_json"},
		{"a tree of several values", func() error {
			_, err := ViewNode(context.Background(), env, "pods.json", "$.items[*]", Window{})
			return err
		}, "invalid_path"},
		{"lines of a missing file", func() error {
			_, err := ViewLines(context.Background(), env, "nope.log", "", Window{})
			return err
		}, "file_not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			var r *Refusal
			if !errors.As(err, &r) || r.Code != tc.code {
				t.Fatalf("got %v, want a refusal %s", err, tc.code)
			}
			var o map[string]any
			if json.Unmarshal(r.Answer, &o) != nil {
				t.Fatalf("the answer is not the tools' JSON object: %s", r.Answer)
			}
			if msg, _ := o["message"].(string); msg == "" {
				t.Fatalf("the answer has no message: %s", r.Answer)
			}
		})
	}
}

func TestViewNode(t *testing.T) {
	env := viewDir(t)
	cases := []struct {
		name, path string
		w          Window
		typ        string
		total      int
		keys       []string
		paths      []string
	}{
		{"the top object", "", Window{}, "object", 3, []string{"kind", "items", "note"}, []string{"$.kind", "$.items", "$.note"}},
		{"a window of an array", "$.items", Window{Offset: 48}, "array", 50, []string{"48", "49"}, []string{"$.items[48]", "$.items[49]"}},
		{"a nested object", "$.items[2].meta", Window{}, "object", 1, []string{"tags"}, []string{"$.items[2].meta.tags"}},
		{"a scalar", "$.kind", Window{}, "string", 1, []string{""}, []string{"$.kind"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ViewNode(context.Background(), env, "pods.json", tc.path, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			if got.Type != tc.typ || got.Total != tc.total || len(got.Children) != len(tc.keys) {
				t.Fatalf("got %s of %d with %d children, want %s of %d with %d", got.Type, got.Total, len(got.Children), tc.typ, tc.total, len(tc.keys))
			}
			for i, ch := range got.Children {
				if ch.Key != tc.keys[i] || ch.Path != tc.paths[i] {
					t.Errorf("child %d: %q at %s, want %q at %s", i, ch.Key, ch.Path, tc.keys[i], tc.paths[i])
				}
			}
		})
	}
	top, _ := ViewNode(context.Background(), env, "pods.json", "", Window{})
	if note := top.Children[2]; !note.Cut || len(note.Value) > maxPreview+2 {
		t.Errorf("a long string is shown whole: cut %v, %d bytes", note.Cut, len(note.Value))
	}
	if items := top.Children[1]; items.Len != 50 || items.Value != nil {
		t.Errorf("a container child: len %d, value %s", items.Len, items.Value)
	}
}

func TestViewLines(t *testing.T) {
	env := viewDir(t)
	cases := []struct {
		name, search string
		w            Window
		want         []int // line numbers
		matched      int
		literal      bool
	}{
		{"a window", "", Window{Offset: 1, Limit: 2}, []int{2, 3}, 5, false},
		{"a search, case-insensitive", "error", Window{}, []int{3, 5}, 2, false},
		{"a regexp", `^(WARN|INFO) `, Window{Offset: 1}, []int{2, 4}, 3, false},
		{"an invalid regexp is literal text", "disk 91% (", Window{}, []int{2}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ViewLines(context.Background(), env, "app.log", tc.search, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			var ns []int
			for _, l := range got.Lines {
				ns = append(ns, l.N)
			}
			if fmt.Sprint(ns) != fmt.Sprint(tc.want) || got.Matched != tc.matched || got.Total != 5 || got.Literal != tc.literal {
				t.Fatalf("lines %v, %d matched of %d, literal %v; want %v, %d of 5, %v", ns, got.Matched, got.Total, got.Literal, tc.want, tc.matched, tc.literal)
			}
		})
	}
}

// BenchmarkViewNode: a window of 1,000 children of a container under the
// 64 KB that members caches (~25 KB): each child is taken from one walk of
// the container, not from a walk per child.
//
//	go test -run '^$' -bench ViewNode -benchmem -count 3 ./explore/
func BenchmarkViewNode(b *testing.B) {
	dir := b.TempDir()
	items := make([]string, 1000)
	for i := range items {
		items[i] = fmt.Sprintf(`{"n":%d,"ok":true}`, i)
	}
	writeFile(b, filepath.Join(dir, "items.json"), `{"items":[`+strings.Join(items, ",")+`]}`)
	env := dirEnv(b, dir)
	for b.Loop() {
		if _, err := ViewNode(context.Background(), env, "items.json", "$.items", Window{Limit: MaxViewWindow}); err != nil {
			b.Fatal(err)
		}
	}
}
