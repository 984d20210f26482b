package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	schema := Object(
		String("file", "", Required(), MaxLength(8)),
		Integer("lines", "", Default(50), Min(1), Max(1000)),
		Boolean("ignore_case", ""),
		String("order", "", Enum("asc", "desc")),
		Property{Name: "tags", Schema: map[string]any{"type": "array", "maxItems": 3, "items": map[string]any{"type": "string", "maxLength": 4}}},
		Property{Name: "ids", Schema: map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}},
	)
	params := MustParams(schema)
	if p := params["file"]; !p.Required || p.Type != "string" || *p.MaxLength != 8 {
		t.Fatalf("file: %+v", p)
	}
	if p := params["tags"]; p.Items == nil || p.Items.Type != "string" || *p.Items.MaxLength != 4 || *p.MaxItems != 3 {
		t.Fatalf("tags: %+v", p)
	}
	huge := strings.Repeat("x", 200_000)
	for _, tc := range []struct {
		name, args, want, problems string
	}{
		{"defaults filled", `{"file":"a.log"}`, `{"file":"a.log","lines":50}`, ""},
		{"given kept", `{"file":"a.log","lines":3,"order":"asc"}`, `{"file":"a.log","lines":3,"order":"asc"}`, ""},
		{"null is absent", `{"file":"a","lines":null}`, `{"file":"a","lines":50}`, ""},
		{"all problems at once", `{"lines":1.5,"ignore_case":"yes","order":"up"}`, "", "file is required; ignore_case must be a boolean, not a string; lines must be an integer, not a number; order must be one of \"asc\", \"desc\""},
		{"not an object", `"file"`, "", "the arguments must be one JSON object"},
		{"no arguments", ``, "", "file is required"},

		// Undeclared arguments are refused, named, with what the tool takes.
		{"unknown refused", `{"file":"a","extra":[1]}`, "", `unknown argument(s) "extra" (this tool takes: file, ids, ignore_case, lines, order, tags)`},
		{"unknown name clipped", `{"file":"a","` + huge + `":1}`, "", `unknown argument(s) "` + strings.Repeat("x", 40) + `…" (this tool takes: file, ids, ignore_case, lines, order, tags)`},
		// A name differing only in case would reach a handler's
		// encoding/json decode as the declared one, unchecked.
		{"case variant refused", `{"file":"a","LINES":"many"}`, "", `"LINES" is not an argument (names are case-sensitive): did you mean lines?`},
		{"unicode fold variant refused", `{"file":"a","tagſ":[]}`, "", `"tagſ" is not an argument (names are case-sensitive): did you mean tags?`}, // ſ folds to s
		{"duplicate names: the last one, once", `{"file":"toolongname","file":"b"}`, `{"file":"b","lines":50}`, ""},

		// Bounds.
		{"maximum", `{"file":"a","lines":1001}`, "", "lines must be at most 1000"},
		{"minimum", `{"file":"a","lines":0}`, "", "lines must be at least 1"},
		{"maxLength in characters, not bytes", `{"file":"ééééééé"}`, `{"file":"ééééééé","lines":50}`, ""},
		{"maxLength", `{"file":"` + huge + `"}`, "", "file must be at most 8 characters, not 200000"},
		{"maxItems", `{"file":"a","tags":["a","b","c","d"]}`, "", "tags must have at most 3 items, not 4"},
		{"items type", `{"file":"a","tags":["a",2,3]}`, "", "tags item 1 must be a string, not an integer (and 1 more items like it)"},
		{"items bound", `{"file":"a","tags":["abcde"]}`, "", "tags item 0 must be at most 4 characters, not 5"},
		{"number out of range", `{"file":"a","lines":1e400}`, "", "lines is a number out of range"},
		{"integer past 2^53 without a maximum", `{"file":"a","ids":[1e300]}`, "", "ids item 0 must be between -9007199254740992 and 9007199254740992"},

		// Integers reach handlers as integers.
		{"1.0 is 1", `{"file":"a","lines":1.0,"ids":[2.0,3e0]}`, `{"file":"a","ids":[2,3],"lines":1}`, ""},
		{"1e2 is 100", `{"file":"a","lines":1e2}`, `{"file":"a","lines":100}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := CheckArgs(params, json.RawMessage(tc.args))
			if p := strings.Join(problems, "; "); p != tc.problems {
				t.Fatalf("problems %q, want %q", p, tc.problems)
			}
			if tc.want == "" {
				return
			}
			if string(got) != tc.want {
				t.Fatalf("args %s, want %s", got, tc.want)
			}
		})
	}
}

// TestCheckOpen: an open schema (additionalProperties) passes arguments
// it does not declare, but never a case variant of one it does.
func TestCheckOpen(t *testing.T) {
	s := MustParseSchema(json.RawMessage(`{"type":"object","properties":{"patches":{"type":"array"},"clear":{"type":"boolean"}},"additionalProperties":true}`))
	if !s.Open {
		t.Fatal("additionalProperties true is not open")
	}
	got, problems := s.Check(json.RawMessage(`{"goal":"ship","patches":[]}`))
	if len(problems) > 0 || string(got) != `{"goal":"ship","patches":[]}` {
		t.Errorf("open schema: %s %q", got, problems)
	}
	_, problems = s.Check(json.RawMessage(`{"PATCHES":[{"op":"set"}],"Clear":true}`))
	if p := strings.Join(problems, "; "); p != `"Clear" is not an argument (names are case-sensitive): did you mean clear?; "PATCHES" is not an argument (names are case-sensitive): did you mean patches?` {
		t.Errorf("case variants: %q", p)
	}
	if MustParseSchema(json.RawMessage(`{"type":"object","additionalProperties":false}`)).Open {
		t.Error("additionalProperties false is open")
	}
}

// TestCheckedHandlerSeesChecked: what a handler decodes is exactly what
// was checked.
func TestCheckedHandlerSeesChecked(t *testing.T) {
	schema := Object(Integer("max_tokens", "", Min(1), Max(100)))
	var seen string
	h := Checked(schema, func(p []string) Result { return Text("bad: " + strings.Join(p, "; ")) }, func(_ context.Context, args json.RawMessage) Result {
		var a struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return Text("decode: " + err.Error())
		}
		seen = string(args)
		return Text("ok")
	})
	for _, tc := range []struct{ args, want, seen string }{
		{`{"max_tokens":1.0}`, "ok", `{"max_tokens":1}`},
		{`{"max_tokens":5,"max_tokens":50}`, "ok", `{"max_tokens":50}`},
		{`{"MAX_TOKENS":1000000}`, `bad: "MAX_TOKENS" is not an argument (names are case-sensitive): did you mean max_tokens?`, ""},
		{`{"max_tokens":101}`, "bad: max_tokens must be at most 100", ""},
	} {
		seen = ""
		if r := h(context.Background(), json.RawMessage(tc.args)); r.Text != tc.want || seen != tc.seen {
			t.Errorf("%s: %q (handler saw %s), want %q (%s)", tc.args, r.Text, seen, tc.want, tc.seen)
		}
	}
}
