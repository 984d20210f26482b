package explore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ctsCase is one case of the JSONPath Compliance Test Suite
// (testdata/jsonpath-cts, RFC 9535).
type ctsCase struct {
	Name         string          `json:"name"`
	Selector     string          `json:"selector"`
	Document     json.RawMessage `json:"document"`
	Result       *[]any          `json:"result"`
	Results      [][]any         `json:"results"`
	ResultPaths  []string        `json:"result_paths"`
	ResultsPaths [][]string      `json:"results_paths"`
	Invalid      bool            `json:"invalid_selector"`
}

func loadCTS(t *testing.T) []ctsCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/jsonpath-cts/cts.json")
	if err != nil {
		t.Fatal(err)
	}
	var suite struct {
		Tests []ctsCase `json:"tests"`
	}
	if err := json.Unmarshal(raw, &suite); err != nil {
		t.Fatal(err)
	}
	if len(suite.Tests) != 703 {
		t.Fatalf("the vendored suite has %d cases, want 703 (update testdata/jsonpath-cts/README.md with the new commit)", len(suite.Tests))
	}
	return suite.Tests
}

// getInNodes reads a get_in answer as a node list: a node list or the
// matches of a filter are a JSON array of their values; a singular path's
// value is one node (a string printed raw); key_path_not_found is none.
func getInNodes(out string) ([]any, error) {
	if code := errCode(out); code == "key_path_not_found" {
		return []any{}, nil
	} else if code != "" {
		return nil, fmt.Errorf("error answer: %s", out)
	}
	k := strings.LastIndex(out, "--- get_in: ")
	if k < 0 {
		return nil, fmt.Errorf("no footer: %s", out)
	}
	body, foot := strings.TrimSuffix(out[:k], "\n"), out[k:]
	switch {
	case strings.Contains(foot, "(nodes [") || strings.Contains(foot, "(matches ["):
		var v []any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			return nil, fmt.Errorf("node list %q: %v", body, err)
		}
		return v, nil
	case strings.Contains(foot, " (string"):
		return []any{body}, nil
	}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return nil, fmt.Errorf("value %q: %v", body, err)
	}
	return []any{v}, nil
}

// normal decodes v as JSON decodes it (numbers as float64).
func normal(v []any) []any {
	b, _ := json.Marshal(v)
	out := []any{}
	_ = json.Unmarshal(b, &out)
	return out
}

// TestJSONPathComplianceSuite runs every case of the RFC 9535 compliance
// suite through get_in, as a model's call runs: a valid selector's answer
// is the node list the suite gives (or one of those it allows), and its
// nodes' normalized paths are the suite's; an invalid selector is answered
// invalid_path with the column.
func TestJSONPathComplianceSuite(t *testing.T) {
	dir := t.TempDir()
	env := dirEnv(t, dir)
	env.MaxExtractionTokens = 1 << 30
	failed := 0
	for i, tc := range loadCTS(t) {
		file := fmt.Sprintf("cts-%03d.json", i)
		doc := tc.Document
		if tc.Invalid {
			doc = json.RawMessage(`{}`)
		}
		if err := os.WriteFile(filepath.Join(dir, file), doc, 0o644); err != nil {
			t.Fatal(err)
		}
		ok := t.Run(tc.Name, func(t *testing.T) {
			out := run(t, env, ToolGetIn, map[string]any{"file": file, "path": tc.Selector})
			if tc.Invalid {
				var e struct {
					Error  string `json:"error"`
					Column int    `json:"column"`
				}
				if json.Unmarshal([]byte(out), &e) != nil || e.Error != "invalid_path" || e.Column < 1 || e.Column > len([]rune(tc.Selector))+1 {
					t.Errorf("selector %q is invalid; got %s", tc.Selector, out)
				}
				return
			}
			got, err := getInNodes(out)
			if err != nil {
				t.Fatalf("selector %q: %v", tc.Selector, err)
			}
			want := tc.Results
			if tc.Result != nil {
				want = append(want, *tc.Result)
			}
			got = normal(got)
			if !slices.ContainsFunc(want, func(w []any) bool { return reflect.DeepEqual(got, normal(w)) }) {
				t.Fatalf("selector %q on %s:\n got %v\nwant %v", tc.Selector, tc.Document, got, want)
			}
			paths := ctsPaths(t, filepath.Join(dir, file), tc.Selector)
			wantPaths := tc.ResultsPaths
			if tc.ResultPaths != nil {
				wantPaths = append(wantPaths, tc.ResultPaths)
			}
			if len(wantPaths) > 0 && !slices.ContainsFunc(wantPaths, func(w []string) bool { return slices.Equal(paths, w) }) {
				t.Errorf("selector %q: normalized paths %q, want %q", tc.Selector, paths, wantPaths)
			}
		})
		if !ok {
			failed++
		}
	}
	if failed > 0 {
		t.Logf("%d of 703 cases failed", failed)
	}
}

// ctsPaths are the normalized paths of the nodes selector selects in the
// file.
func ctsPaths(t *testing.T, file, selector string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	d := newDoc(file, file, data)
	q, err := parsePath(selector)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{}
	if q.singular {
		if n, _, miss := d.resolve(segments(q)); miss == nil {
			paths = append(paths, d.normPath(n.v.start))
		}
		return paths
	}
	nodes, _, err := d.selectPath(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		paths = append(paths, d.normPath(n.start))
	}
	return paths
}
