package pad

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// Structured pads take the state's keys directly ({"task": "x"}), deep-
// merged; the schema is checked after the merge. Both backends.
func TestBackendStructuredDirectKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		tests := []struct {
			name    string
			updates []string
			want    string // the final state, compact
			warn    string // in the last result
			err     string // the last call's error code
		}{
			{"nested objects merge", []string{`{"env":{"a":1,"b":{"c":2}}}`, `{"env":{"b":{"d":3}}}`}, `{"env":{"a":1,"b":{"c":2,"d":3}}}`, "", ""},
			{"arrays replace", []string{`{"facts":["a","b"]}`, `{"facts":["c"]}`}, `{"facts":["c"]}`, "", ""},
			{"primitives replace", []string{`{"task":"x","step":1}`, `{"step":2}`}, `{"step":2,"task":"x"}`, "", ""},
			{"null removes", []string{`{"task":"x","step":1}`, `{"task":null}`}, `{"step":1}`, "", ""},
			{"null inside an object removes there", []string{`{"env":{"a":1,"b":2}}`, `{"env":{"a":null}}`}, `{"env":{"b":2}}`, "", ""},
			{"prototype keys stripped at every depth", []string{`{"__proto__":{"admin":true},"env":{"constructor":{"x":1},"ok":{"prototype":1,"y":2}}}`}, `{"env":{"ok":{"y":2}}}`, "dropped forbidden keys", ""},
			{"schema checked after the merge", []string{`{"step":1}`, `{"step":"two"}`}, `{"step":1}`, "", "schema_violation"},
			{"the state form still works", []string{`{"state":{"task":"t"}}`}, `{"task":"t"}`, "", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				opts := Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}
				p := open(opts)
				h := newHarness(t, func(context.Context) (*Pad, error) { return p.Pad, nil }, opts)
				ctx, _ := h.session("s")
				var text string
				for _, u := range tt.updates {
					text, _ = h.tool(ctx, ToolUpdate, json.RawMessage(u))
				}
				if tt.err != "" && !strings.Contains(text, `"error":"`+tt.err+`"`) {
					t.Fatalf("want %s: %s", tt.err, text)
				}
				if tt.err == "" && (strings.Contains(text, `"error"`) || (tt.warn != "" && !strings.Contains(text, tt.warn))) {
					t.Fatalf("result: %s", text)
				}
				var m any
				if err := json.Unmarshal([]byte(p.doc()), &m); err != nil {
					t.Fatal(err)
				}
				if got, _ := json.Marshal(m); string(got) != tt.want {
					t.Fatalf("state %s, want %s", got, tt.want)
				}
			})
		}
	})
}

// content replaces the whole body, validated like a hand edit.
func TestBackendUpdateContent(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		h := newHarness(t, func(context.Context) (*Pad, error) { return p.Pad, nil }, Options{})
		ctx, s := h.session("s")
		h.subscribe(ctx, s)
		body := "## Task\nship v2\n\n## Plan\n1. [ ] tag the release\n"
		text, _ := h.tool(ctx, ToolUpdate, map[string]any{"content": body})
		if !strings.Contains(text, "+ship v2") || len(drain(s.ch)) != 1 {
			t.Fatalf("content: %s", text)
		}
		before := p.doc()
		for _, bad := range []string{"preamble\n## Task\nx\n", "## Task\nx\n## Nope\ny\n", "## Task\na\n## Task\nb\n"} {
			text, _ = h.tool(ctx, ToolUpdate, map[string]any{"content": bad})
			if !strings.Contains(text, `"error":"bad_content"`) || !strings.Contains(text, `"state_unchanged":true`) || !strings.Contains(text, "line") {
				t.Fatalf("%q: %s", bad, text)
			}
		}
		text, _ = h.tool(ctx, ToolUpdate, map[string]any{"content": body, "patches": []any{}})
		if !strings.Contains(text, `"error":"invalid_arguments"`) {
			t.Fatalf("content with patches: %s", text)
		}
		if p.doc() != before {
			t.Fatal("a refused content changed the pad")
		}
		// A structured pad: JSON text, checked against the schema.
		opts := Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}
		q := open(opts)
		hq := newHarness(t, func(context.Context) (*Pad, error) { return q.Pad, nil }, opts)
		if text, _ := hq.tool(ctx, ToolUpdate, map[string]any{"content": `{"task": "t"}`}); !strings.Contains(text, "updated") {
			t.Fatalf("structured content: %s", text)
		}
		for bad, code := range map[string]string{`{"task": `: "bad_content", `{"step": "two"}`: "schema_violation"} {
			if text, _ := hq.tool(ctx, ToolUpdate, map[string]any{"content": bad}); !strings.Contains(text, `"error":"`+code+`"`) {
				t.Fatalf("%s: %s", bad, text)
			}
		}
	})
}

func TestReadOnlyAndTemplate(t *testing.T) {
	defs, err := Tools(func(context.Context) (*Pad, error) { return nil, nil }, Options{ReadOnly: true}, nil)
	if err != nil || len(defs) != 1 || defs[0].Name != ToolRead {
		t.Fatalf("read_only tools: %v %v", defs, err)
	}
	tmpl := "## Task\nship v2\n\n## Plan\n1. [ ] tag\n"
	p := newPad(t, Options{Template: tmpl})
	out, err := p.Read(nil)
	if err != nil || !strings.Contains(out, "## Task\nship v2") || !strings.Contains(out, "1. [ ] tag") {
		t.Fatalf("template read: %s %v", out, err)
	}
	if fileExists(p.Path()) {
		t.Fatal("reading a templated pad wrote it")
	}
	if _, err := p.Update([]Patch{{Section: "Plan", Op: OpCheck, Content: "1"}}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p.Path()); !strings.Contains(got, "ship v2") || !strings.Contains(got, "1. [x] tag") {
		t.Fatalf("first write from the template:\n%s", got)
	}
	for _, o := range []Options{{Template: "text before\n## Task\n"}, {Format: FormatJSON, Template: "[1]"}, {Format: FormatJSON, Schema: fixture(t, "schema.json"), Template: `{"step":"x"}`}} {
		if _, err := Open(t.TempDir(), o); !errors.Is(err, ErrOptions) {
			t.Fatalf("template %q: %v", o.Template, err)
		}
	}
}

// fileExists reports whether something (a link too) is at path.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
