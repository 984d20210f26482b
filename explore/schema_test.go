package explore

import (
	"strings"
	"testing"
)

func TestCellKind(t *testing.T) {
	tests := map[string]string{
		"12": "integer", "-3": "integer", "1.5": "number", "1e3": "number", "true": "boolean", "FALSE": "boolean",
		"2026-01-02": "datetime", "2026-01-02T03:04:05Z": "datetime", "2026-01-02 03:04:05": "datetime",
		"abc": "string", "12abc": "string", "NaN": "number",
	}
	for in, want := range tests {
		if got := cellKind(in); got != want {
			t.Errorf("cellKind(%q) = %s, want %s", in, got, want)
		}
	}
	cols := []struct {
		kinds map[string]int
		want  string
	}{
		{map[string]int{}, "empty"},
		{map[string]int{"integer": 3}, "integer"},
		{map[string]int{"integer": 3, "number": 1}, "number"},
		{map[string]int{"integer": 3, "string": 1}, "mixed (integer 3, string 1)"},
	}
	for _, c := range cols {
		if got := columnType(c.kinds); got != c.want {
			t.Errorf("columnType(%v) = %s, want %s", c.kinds, got, c.want)
		}
	}
}

func TestMarkdownSchema(t *testing.T) {
	md := strings.Join([]string{
		"# A",         // 1
		"text",        // 2
		"```sh",       // 3
		"# not one",   // 4
		"```",         // 5
		"## B ##",     // 6
		"    # code",  // 7 (indented code)
		"#hashtag",    // 8 (no space: not a heading)
		"~~~",         // 9
		"## fenced",   // 10
		"~~~",         // 11
		"### C",       // 12
		"####### too", // 13 (7 #: not a heading)
		"# D",         // 14
		"end",         // 15
	}, "\n") + "\n"
	d := newDoc("x.md", "x.md", []byte(md))
	got, n := markdownSchema(d, 6)
	want := "# A (lines 1-13)\n  ## B (lines 6-13)\n    ### C (lines 12-13)\n# D (lines 14-15)\n"
	if got != want || n != 4 {
		t.Errorf("markdownSchema:\n%s(n=%d)\nwant:\n%s", got, n, want)
	}
	if got, n := markdownSchema(d, 1); n != 2 || strings.Contains(got, "##") {
		t.Errorf("max_depth 1 should keep level-1 headings only: %s", got)
	}
}

func TestCSVSchemaQuotedNewlines(t *testing.T) {
	d := newDoc("t.csv", "t.csv", []byte("a,b\n1,\"multi\nline\"\n2,x\n3\n"))
	got := csvSchema(d)
	if !strings.HasPrefix(got, "2 columns, 3 rows after the header row (line 1); 1 row with a different column count\n") {
		t.Errorf("csvSchema: %s", got)
	}
}

func TestLineShape(t *testing.T) {
	if got := lineShape([]byte("2026-11-30 09:01:00 took 17ms id=42")); got != "#-#-# #:#:# took #ms id=#" {
		t.Errorf("lineShape = %q", got)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name, content string
		want          fileKind
	}{
		{"a.json", `{"a":1}`, kindJSON},
		{"a.json", "{\"a\":1}\n{\"a\":2}\n", kindNDJSON},
		{"a.json", `{"a":`, kindJSON},
		{"a.txt", `[1,2]`, kindJSON},
		{"a.txt", "{\"a\":1}\n{\"b\":2}\n", kindNDJSON},
		{"a.txt", "{not json}\n", kindText},
		{"a.log", "plain\n", kindText},
		{"a.jsonl", "{\"a\":1}\n", kindNDJSON},
		{"a.MD", "# x\n", kindMarkdown},
		{"a.csv", "a,b\n", kindCSV},
		{"a.tsv", "a\tb\n", kindTSV},
		{"noext", `{"a":1}`, kindJSON},
	}
	for _, tc := range tests {
		d := newDoc(tc.name, tc.name, []byte(tc.content))
		if d.kind != tc.want {
			t.Errorf("%s %q: %s, want %s", tc.name, tc.content, d.kind, tc.want)
		}
		if tc.want == kindNDJSON && d.jsonErr != "" {
			t.Errorf("%s: NDJSON with a leftover JSON error %q", tc.name, d.jsonErr)
		}
	}
}
