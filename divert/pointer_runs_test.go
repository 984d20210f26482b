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
	"github.com/scratchpad-mcp/scratchpad-mcp/reference"
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
			// The reference the pointer offers resolves too, to the
			// largest array when there is one.
			ref := pointerRef.FindStringSubmatch(text)
			if ref == nil {
				t.Fatalf("no reference example in the pointer:\n%s", text)
			}
			got, err := reference.Resolve(context.Background(), &reference.Env{Explore: env}, reference.Call{Args: json.RawMessage(`{"x":` + ref[1] + `}`)})
			if err != nil || len(got.Refs) != 1 || got.Bytes == 0 {
				t.Errorf("%s does not resolve: %v", ref[1], err)
			}
		})
	}
}

// pointerRef is the reference example a pointer offers.
var pointerRef = regexp.MustCompile(`(?m)^or pass it \(or a path of it\) to another tool as an argument, unread: (\{.*\})$`)

// TestEveryToolOnWhatIsStored: each of the nine exploration tools answers
// on each format a stored output has (JSON object and array, NDJSON,
// Markdown, text, and the shapes of a read resource and a prompt): a real
// answer, or not_json where a JSON path cannot apply; never an internal
// error.
func TestEveryToolOnWhatIsStored(t *testing.T) {
	long := strings.Repeat("line of text with a word in it\n", 400)
	outputs := map[string]string{
		"json object": `{"kind":"List","items":[{"id":1,"name":"a"},{"id":2,"name":"b"}],"total":"2"}`,
		"json array":  `[{"id":"1","tags":["x","y"]},{"id":"2","tags":[]}]`,
		"ndjson":      "{\"level\":\"info\",\"n\":1}\n{\"level\":\"warn\",\"n\":2}\n{\"level\":\"info\",\"n\":3}\n",
		"markdown":    "# Title\n\nSome text.\n\n## Part\n\n```go\nx := 1\n```\n" + long,
		"text":        long,
		"resource":    `{"contents":[{"uri":"file:///notes.md","mimeType":"text/markdown","text":"# Notes\n\n` + strings.ReplaceAll(long, "\n", `\n`) + `"}]}`,
		"prompt":      `{"description":"review","messages":[{"role":"user","content":{"type":"text","text":"Review this: ` + strings.ReplaceAll(long, "\n", `\n`) + `"}}]}`,
	}
	calls := []struct {
		tool string
		args map[string]any
		json bool // a JSON path tool: not_json on Markdown and text
	}{
		{explore.ToolHead, map[string]any{"lines": 5}, false},
		{explore.ToolSlice, map[string]any{"start": 1, "end": 3}, false},
		{explore.ToolGrep, map[string]any{"pattern": "word|n"}, false},
		{explore.ToolSchema, map[string]any{}, false},
		{explore.ToolItemSchema, map[string]any{"path": "$..*", "limit": 20}, true},
		{explore.ToolGetIn, map[string]any{"path": "$..*", "limit": 3}, true},
		{explore.ToolIterateOver, map[string]any{"path": "$..*", "fields": "@", "limit": 3}, true},
		{explore.ToolCountBy, map[string]any{"path": "$..*"}, true},
		{explore.ToolRead, map[string]any{}, false},
	}
	counter := tokens.ForModel("openai", "gpt-4o")
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			st, err := Save(memdir.At(dir), "srv", "tool", []byte(out))
			if err != nil {
				t.Fatal(err)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			env := &explore.Env{Root: root, Count: counter.CountString, MaxExtractionTokens: explore.DefaultMaxExtractionTokens}
			text := st.Format == FormatMarkdown || st.Format == FormatText
			for _, c := range calls {
				args := map[string]any{"file": st.Name}
				for k, v := range c.args {
					args[k] = v
				}
				got := explore.Call(context.Background(), env, c.tool, args).Text
				var e struct {
					Error string `json:"error"`
				}
				if strings.HasPrefix(got, `{"error"`) {
					_ = json.Unmarshal([]byte(got), &e)
				}
				want := ""
				if c.json && text {
					want = "not_json"
				}
				if e.Error != want {
					t.Errorf("%s on %s (%s): %s", c.tool, name, st.Format, got)
				}
				// $..* has nodes in every JSON format: none is a wrong answer.
				if c.json && !text && (strings.HasPrefix(got, "[]") || strings.Contains(got, `"count": 0`)) {
					t.Errorf("%s on %s (%s): no node\n%s", c.tool, name, st.Format, got)
				}
			}
		})
	}
}
