package divert

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// pointerCall is a call a pointer offers: "- tool {args}".
var pointerCall = regexp.MustCompile(`(?m)^- (\w+) (\{.*\})$`)

// TestPointerCallsRunAndFit: for the shapes MCP servers answer (a
// listing, a directory tree, a knowledge graph, database rows, NDJSON,
// Markdown, a log, keys that need quotes in a path), every call the
// pointer offers runs on the stored file and fits the default per-call
// cap; a tree's pointer reaches all its depths with a descendant path.
func TestPointerCallsRunAndFit(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "explore", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var pods, nd []string
	for i := range 60 {
		pods = append(pods, fmt.Sprintf(`{"metadata":{"name":"pod-%d","namespace":"ns-%d"},"status":{"phase":"%s"}}`, i, i%5, []string{"Running", "Failed"}[i%2]))
		nd = append(nd, fmt.Sprintf(`{"ts":"2026-01-01T00:00:%02dZ","level":"%s","msg":"event %d"}`, i, []string{"info", "warn", "error"}[i%3], i))
	}
	cases := []struct {
		name string
		data []byte
		want string // a call that must be among those offered
	}{
		{"pods", []byte(`{"kind":"PodList","items":[` + strings.Join(pods, ",") + `]}`), `count_by {"file":"%s","path":"$.items","group_by":"status.phase"}`},
		{"directory tree", fixture("dir_tree.json"), `count_by {"file":"%s","path":"$..[?@.type]","group_by":"type"}`},
		{"memory graph", fixture("memory_graph.json"), ""},
		{"postgres rows", fixture("pg_packages.json"), ""},
		{"ndjson", []byte(strings.Join(nd, "\n")), ""},
		{"markdown", fixture("doc.md"), ""},
		{"log", fixture("app.log"), ""},
		{"keys in quotes", []byte(`{"kube-system":[{"name":"a","phase":"x"},{"name":"b","phase":"y"}],"1":{"a":1}}`), `iterate_over {"file":"%s","path":"$[\"kube-system\"]","fields":"name,phase","limit":2}`},
		{"no array", []byte(`{"1":{"a":1},"b":2}`), `get_in {"file":"%s","path":"$[\"1\"]"}`},
	}
	counter := tokens.ForModel("openai", "gpt-4o")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := Save(memdir.At(dir), "srv", "tool", tc.data)
			if err != nil {
				t.Fatal(err)
			}
			text := Pointer{Server: "srv", Tool: "tool", Stored: st, Tokens: 50000, Threshold: 1000}.Text(tc.data)
			calls := pointerCall.FindAllStringSubmatch(text, -1)
			if len(calls) == 0 {
				t.Fatalf("no calls in the pointer:\n%s", text)
			}
			if tc.want != "" && !strings.Contains(text, "- "+fmt.Sprintf(tc.want, st.Name)+"\n") && !strings.HasSuffix(text, "- "+fmt.Sprintf(tc.want, st.Name)) {
				t.Errorf("the pointer does not offer %s:\n%s", fmt.Sprintf(tc.want, st.Name), text)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			env := &explore.Env{Root: root, Count: counter.CountString, MaxExtractionTokens: explore.DefaultMaxExtractionTokens}
			for _, c := range calls {
				var args map[string]any
				if err := json.Unmarshal([]byte(c[2]), &args); err != nil {
					t.Fatalf("%s: %v", c[0], err)
				}
				res := explore.Call(context.Background(), env, c[1], args)
				if strings.HasPrefix(res.Text, `{"error"`) {
					t.Errorf("%s\nanswers %s", c[0], res.Text)
				}
			}
		})
	}
}
