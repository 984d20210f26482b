package tool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type item struct {
	Op      string   `json:"op" arg:"enum=set|delete"`
	Key     string   `json:"key,omitempty" arg:"maxLength=4"`
	TTL     *float64 `json:"ttl,omitempty" arg:"minimum=0,maximum=60"`
	Content string   `json:"content,omitempty" arg:"lenient"`
}

type fileArg struct {
	File string `json:"file" arg:"description=$fileDesc,maxLength=8"`
}

type declArgs struct {
	fileArg
	Lines      int             `json:"lines,omitempty" arg:"default=$defLines,minimum=1,maximum=$maxLines"`
	Limit      *int            `json:"limit,omitempty" arg:"minimum=0"`
	IgnoreCase bool            `json:"ignore_case,omitempty"`
	Order      string          `json:"order,omitempty" arg:"enum=asc|desc"`
	Format     string          `json:"format,omitempty" arg:"enum=$formats"`
	Tags       []string        `json:"tags,omitempty" jsonschema:"Only these." arg:"maxItems=3,items.maxLength=4"`
	IDs        []int           `json:"ids,omitempty"`
	Ratio      float64         `json:"ratio,omitempty"`
	Value      any             `json:"value,omitempty"`
	Items      []item          `json:"items,omitempty"`
	Raw        json.RawMessage `json:"raw,omitempty" arg:"type=object"`
}

var declOpts = ArgsOptions{Vars: map[string]any{"fileDesc": "The file.", "defLines": 50, "maxLines": 1000, "formats": []string{"md", "xml"}}}

// TestArgsSchema: the schema generated from a struct is the one
// [Object] would have written: keys sorted, no "null" types, no
// additionalProperties, required in field order.
func TestArgsSchema(t *testing.T) {
	got := string(MustArgs[declArgs](declOpts).Schema())
	want := `{"properties":{"file":{"description":"The file.","maxLength":8,"type":"string"},` +
		`"format":{"enum":["md","xml"],"type":"string"},"ids":{"items":{"type":"integer"},"type":"array"},` +
		`"ignore_case":{"type":"boolean"},` +
		`"items":{"items":{"properties":{"content":{"type":"string"},"key":{"maxLength":4,"type":"string"},"op":{"enum":["set","delete"],"type":"string"},"ttl":{"maximum":60,"minimum":0,"type":"number"}},"required":["op"],"type":"object"},"type":"array"},` +
		`"limit":{"minimum":0,"type":"integer"},"lines":{"default":50,"maximum":1000,"minimum":1,"type":"integer"},` +
		`"order":{"enum":["asc","desc"],"type":"string"},"ratio":{"type":"number"},"raw":{"type":"object"},` +
		`"tags":{"description":"Only these.","items":{"maxLength":4,"type":"string"},"maxItems":3,"type":"array"},` +
		`"value":{}},"required":["file"],"type":"object"}`
	if got != want {
		t.Errorf("schema:\n got %s\nwant %s", got, want)
	}
	open := string(MustArgs[struct {
		Clear bool `json:"clear,omitempty"`
	}](ArgsOptions{Open: true}).Schema())
	if open != `{"additionalProperties":true,"properties":{"clear":{"type":"boolean"}},"type":"object"}` {
		t.Errorf("open schema: %s", open)
	}
	if s := string(MustArgs[struct{}](ArgsOptions{}).Schema()); s != `{"properties":{},"type":"object"}` {
		t.Errorf("no arguments: %s", s)
	}
}

// TestArgsDecode is every constraint kind the declarations use, each
// refused by the validator with the answer models read, and what passes
// decoded.
func TestArgsDecode(t *testing.T) {
	a := MustArgs[declArgs](declOpts)
	huge := strings.Repeat("x", 200_000)
	for _, tc := range []struct {
		name, args, problems string
		check                func(declArgs) bool
	}{
		// Decoding.
		{"defaults filled", `{"file":"a.log"}`, "", func(v declArgs) bool { return v.File == "a.log" && v.Lines == 50 && v.Limit == nil }},
		{"given kept", `{"file":"a","lines":3,"limit":0,"order":"asc"}`, "", func(v declArgs) bool { return v.Lines == 3 && v.Limit != nil && *v.Limit == 0 && v.Order == "asc" }},
		{"null is absent", `{"file":"a","lines":null,"limit":null,"tags":null}`, "", func(v declArgs) bool { return v.Lines == 50 && v.Limit == nil && v.Tags == nil }},
		{"null raw JSON is absent", `{"file":"a","raw":null}`, "", func(v declArgs) bool { return v.Raw == nil }},
		{"raw JSON kept", `{"file":"a","raw":{"k":[1]}}`, "", func(v declArgs) bool { return string(v.Raw) == `{"k":[1]}` }},
		{"1.0 is 1", `{"file":"a","lines":1.0,"ids":[2.0,3e0]}`, "", func(v declArgs) bool { return v.Lines == 1 && len(v.IDs) == 2 && v.IDs[1] == 3 }},
		{"1e2 is 100", `{"file":"a","lines":1e2}`, "", func(v declArgs) bool { return v.Lines == 100 }},
		{"a number for a lenient string", `{"file":"a","items":[{"op":"set","content":2}]}`, "", func(v declArgs) bool { return v.Items[0].Content == "2" }},
		{"any value", `{"file":"a","value":{"x":[1]}}`, "", func(v declArgs) bool { return v.Value != nil }},
		{"duplicate names: the last one", `{"file":"toolongname","file":"b"}`, "", func(v declArgs) bool { return v.File == "b" }},
		{"maxLength in characters, not bytes", `{"file":"ééééééé"}`, "", func(v declArgs) bool { return v.File == "ééééééé" }},

		// The arguments as a whole.
		{"not an object", `"file"`, "the arguments must be one JSON object", nil},
		{"no arguments", ``, "file is required", nil},
		{"all problems at once", `{"lines":1.5,"ignore_case":"yes","order":"up"}`, "file is required; ignore_case must be a boolean, not a string; lines must be an integer, not a number; order must be one of \"asc\", \"desc\"", nil},

		// Names.
		{"unknown", `{"file":"a","extra":[1]}`, `unknown argument(s) "extra" (this tool takes: file, format, ids, ignore_case, items, limit, lines, order, ratio, raw, tags, value)`, nil},
		{"unknown name clipped", `{"file":"a","` + huge + `":1}`, `unknown argument(s) "` + strings.Repeat("x", 40) + `…" (this tool takes: file, format, ids, ignore_case, items, limit, lines, order, ratio, raw, tags, value)`, nil},
		{"case variant", `{"file":"a","LINES":"many"}`, `"LINES" is not an argument (names are case-sensitive): did you mean lines?`, nil},
		{"nested case variant", `{"file":"a","items":[{"op":"set","Key":"toolong"}]}`, `items item 0 "Key" is not an argument (names are case-sensitive): did you mean key?`, nil},
		{"unicode fold variant", `{"file":"a","tagſ":[]}`, `"tagſ" is not an argument (names are case-sensitive): did you mean tags?`, nil},

		// Each keyword.
		{"required", `{"lines":2}`, "file is required", nil},
		{"required null", `{"file":null}`, "file is required", nil},
		{"type string", `{"file":7}`, "file must be a string, not an integer", nil},
		{"type integer", `{"file":"a","limit":"3"}`, "limit must be an integer, not a string", nil},
		{"type number", `{"file":"a","ratio":true}`, "ratio must be a number, not a boolean", nil},
		{"type array", `{"file":"a","tags":"k8s"}`, "tags must be an array, not a string", nil},
		{"type object item", `{"file":"a","items":[3]}`, "items item 0 must be an object, not an integer", nil},
		{"enum", `{"file":"a","order":"up"}`, `order must be one of "asc", "desc"`, nil},
		{"enum from a var", `{"file":"a","format":"yaml"}`, `format must be one of "md", "xml"`, nil},
		{"minimum", `{"file":"a","lines":0}`, "lines must be at least 1", nil},
		{"minimum zero", `{"file":"a","limit":-1}`, "limit must be at least 0", nil},
		{"maximum", `{"file":"a","lines":1001}`, "lines must be at most 1000", nil},
		{"maximum of a large number", `{"file":"a","lines":1e300}`, "lines must be at most 1000", nil},
		{"beyond float64", `{"file":"a","lines":1e400}`, "lines is 1e400, outside the numbers this server reads (within ±1e308, exponents within ±400)", nil},
		{"a huge negative exponent", `{"file":"a","ids":[1,1e-999999]}`, "ids item 1 is 1e-999999, outside the numbers this server reads (within ±1e308, exponents within ±400)", nil},
		{"a long number", `{"file":"a","ratio":0.` + strings.Repeat("0", 70) + `1}`, "ratio is a number of 73 characters; at most 64 are read", nil},
		{"maxLength", `{"file":"` + huge + `"}`, "file must be at most 8 characters, not 200000", nil},
		{"maxItems", `{"file":"a","tags":["a","b","c","d"]}`, "tags must have at most 3 items, not 4", nil},
		{"items type", `{"file":"a","tags":["a",2,3]}`, "tags item 1 must be a string, not an integer (and 1 more items like it)", nil},
		{"items maxLength", `{"file":"a","tags":["abcde"]}`, "tags item 0 must be at most 4 characters, not 5", nil},
		{"items integer", `{"file":"a","ids":[1.5]}`, "ids item 0 must be an integer, not a number", nil},
		{"item required", `{"file":"a","items":[{"key":"k"}]}`, "items item 0 op is required", nil},
		{"item enum", `{"file":"a","items":[{"op":"set"},{"op":"drop"}]}`, `items item 1 op must be one of "set", "delete"`, nil},
		{"item maxLength", `{"file":"a","items":[{"op":"set","key":"toolong"}]}`, "items item 0 key must be at most 4 characters, not 7", nil},
		{"item maximum", `{"file":"a","items":[{"op":"set","ttl":61}]}`, "items item 0 ttl must be at most 60", nil},
		{"item minimum", `{"file":"a","items":[{"op":"set","ttl":-1}]}`, "items item 0 ttl must be at least 0", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, problems := a.Decode(json.RawMessage(tc.args))
			if p := strings.Join(Messages(problems), "; "); p != tc.problems {
				t.Fatalf("problems %q, want %q", p, tc.problems)
			}
			if tc.check != nil && !tc.check(v) {
				t.Fatalf("decoded %+v", v)
			}
		})
	}
}

// TestHugeNumbersRefusedFirst: numbers the validator would read slowly
// (tens of milliseconds each, exactly) are refused before it sees them,
// a few named and the rest counted. With the check removed this test
// takes minutes.
func TestHugeNumbersRefusedFirst(t *testing.T) {
	a := MustArgs[declArgs](declOpts)
	ids := strings.TrimSuffix(strings.Repeat("1e-999999,", 2000), ",")
	_, ps := a.Decode(json.RawMessage(`{"file":"a","ids":[` + ids + `]}`))
	if len(ps) != maxHugeSaid+1 || ps[0].Keyword != "range" || ps[maxHugeSaid].Message != "and 1995 more numbers like these" {
		t.Fatalf("%d problems: %q", len(ps), Messages(ps))
	}
}

// TestArgsProblemPaths: a problem says where and which keyword, so a
// tool can answer its own codes for some (pattern_too_long).
func TestArgsProblemPaths(t *testing.T) {
	_, ps := MustArgs[declArgs](declOpts).Decode(json.RawMessage(`{"file":"a","items":[{"op":"x"}]}`))
	if len(ps) != 1 || strings.Join(ps[0].Path, "/") != "items/0/op" || ps[0].Keyword != "enum" {
		t.Fatalf("%+v", ps)
	}
}

// TestArgsOpen: an open declaration passes undeclared arguments, never
// a case variant of a declared one.
func TestArgsOpen(t *testing.T) {
	type patchArgs struct {
		Patches []json.RawMessage `json:"patches,omitempty"`
		Clear   bool              `json:"clear,omitempty"`
	}
	a := MustArgs[patchArgs](ArgsOptions{Open: true})
	if v, ps := a.Decode(json.RawMessage(`{"goal":"ship","patches":[]}`)); len(ps) > 0 || v.Patches == nil {
		t.Errorf("open: %+v %q", v, Messages(ps))
	}
	_, ps := a.Decode(json.RawMessage(`{"PATCHES":[{"op":"set"}],"Clear":true}`))
	if p := strings.Join(Messages(ps), "; "); p != `"Clear" is not an argument (names are case-sensitive): did you mean clear?; "PATCHES" is not an argument (names are case-sensitive): did you mean patches?` {
		t.Errorf("case variants: %q", p)
	}
}

// TestArgsDeclarationErrors: a declaration that cannot be read is
// refused at start-up.
func TestArgsDeclarationErrors(t *testing.T) {
	type unknownKeyword struct {
		A string `json:"a" arg:"pattern=x"`
	}
	type missingVar struct {
		A int `json:"a" arg:"maximum=$nowhere"`
	}
	type itemsOfScalar struct {
		A int `json:"a" arg:"items.maxLength=3"`
	}
	for name, err := range map[string]error{
		"unknown keyword": func() error { _, err := NewArgs[unknownKeyword](ArgsOptions{}); return err }(),
		"missing var":     func() error { _, err := NewArgs[missingVar](ArgsOptions{}); return err }(),
		"items of scalar": func() error { _, err := NewArgs[itemsOfScalar](ArgsOptions{}); return err }(),
		"not a struct":    func() error { _, err := NewArgs[int](ArgsOptions{}); return err }(),
	} {
		if !errors.Is(err, ErrDeclaration) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestArgsDecodeValue: arguments as Go code writes them are validated
// as their JSON would be, and left as they were.
func TestArgsDecodeValue(t *testing.T) {
	a := MustArgs[declArgs](declOpts)
	tags := []string{"a", "b"}
	in := map[string]any{"file": "a", "lines": 7, "tags": tags, "ids": []any{2.0, 3}, "limit": int64(0), "items": []map[string]any{{"op": "set", "content": 2}}}
	v, ps := a.DecodeValue(in)
	if len(ps) > 0 || v.Lines != 7 || len(v.Tags) != 2 || v.IDs[0] != 2 || v.Limit == nil || v.Items[0].Content != "2" {
		t.Fatalf("%+v %q", v, Messages(ps))
	}
	if in["ids"].([]any)[0] != 2.0 || in["lines"] != 7 {
		t.Errorf("input changed: %v", in)
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"file": "a", "lines": 0}, "lines must be at least 1"},
		{map[string]any{"file": "a", "lines": 2.5}, "lines must be an integer, not a number"},
		{map[string]any{"file": 3}, "file must be a string, not an integer"},
		{map[string]any{"file": "a", "tags": []string{"abcdef"}}, "tags item 0 must be at most 4 characters, not 6"},
		{map[string]any{}, "file is required"},
	} {
		if _, ps := a.DecodeValue(tc.args); strings.Join(Messages(ps), "; ") != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, Messages(ps), tc.want)
		}
	}
}
