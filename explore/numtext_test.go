package explore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTextNumber(t *testing.T) {
	for in, want := range map[string]bool{
		"0": true, "993": true, "-5": true, "12.50": true, "1e3": true, "1.5E-2": true, "007": true, "123456789012345678901234": true,
		"": false, "-": false, "1.": false, ".5": false, "+1": false, " 1": false, "1 ": false, "NaN": false, "0x10": false, "1e": false, "1,000": false,
	} {
		if _, ok := textNumber([]byte(in)); ok != want {
			t.Errorf("textNumber(%q) = %v, want %v", in, ok, want)
		}
	}
}

// TestNumbersAsTextFields: which fields read as numbers, and what the
// footer says, on small arrays through the tools.
func TestNumbersAsTextFields(t *testing.T) {
	dir := t.TempDir()
	env := dirEnv(t, dir)
	for _, tc := range []struct {
		name, data, filter string
		want               []int  // the _index of the matches
		note               string // in the footer, "" for none
	}{
		{"all text", `[{"n":"1"},{"n":"22"},{"n":null},{},{"n":"3"}]`, `?(@.n > 2)`, []int{1, 4}, "n: numbers as text, compared as numbers"},
		{"compared as text", `[{"n":"1"},{"n":"22"}]`, `?(@.n == '22')`, []int{1}, ""},
		{"numbers first, text later", `[{"n":1},{"n":"20"},{"n":30}]`, `?(@.n > 2)`, []int{2}, "n: numbers as text mixed with other values, compared as RFC 9535 says"},
		{"text and words", `[{"n":"5"},{"n":"n/a"},{"n":"50"}]`, `?(@.n > 2)`, []int{}, "n: numbers as text mixed with other values"},
		{"numbers only", `[{"n":1},{"n":20}]`, `?(@.n > 2)`, []int{1}, ""},
		{"length compared", `[{"n":"1"},{"n":"4"},{"s":"abcd","n":"9"}]`, `?(@.n >= length(@.s))`, []int{2}, "n: numbers as text"},
		{"in a list", `[{"n":"1"},{"n":"2"}]`, `?(@.n in [2, 3])`, []int{1}, "n: numbers as text"},
		{"nested field", `[{"a":{"b":"10"}},{"a":{"b":"9"}}]`, `?(@.a.b < 10)`, []int{1}, "a.b: numbers as text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := strings.ReplaceAll(tc.name, " ", "_") + ".json"
			if err := os.WriteFile(filepath.Join(dir, file), []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			out := run(t, env, ToolIterateOver, map[string]any{"file": file, "path": "$", "fields": "n", "filter": tc.filter})
			k := strings.LastIndex(out, "\n--- ")
			if k < 0 {
				t.Fatal(out)
			}
			var rows []map[string]any
			if err := json.Unmarshal([]byte(out[:k]), &rows); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := []int{}
			for _, r := range rows {
				got = append(got, int(r["_index"].(float64)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v\n%s", tc.filter, got, tc.want, out)
			}
			switch foot := out[k:]; {
			case tc.note == "" && strings.Contains(foot, "numbers as text"):
				t.Errorf("footer says numbers as text: %s", foot)
			case tc.note != "" && !strings.Contains(foot, tc.note):
				t.Errorf("footer does not say %q: %s", tc.note, foot)
			}
		})
	}
}
