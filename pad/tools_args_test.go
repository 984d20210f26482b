package pad

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryConstraintKind: each kind of constraint the pad tools'
// declarations carry is enforced by the validator, top-level and inside a
// patch, and answered with the code the pad has always answered it with
// (invalid_arguments; inside a patch unknown_section, unknown_op,
// bad_patch with the patch's place, wrong_format on a structured pad).
func TestEveryConstraintKind(t *testing.T) {
	md := newPad(t, Options{})
	mdh := newHarness(t, func(context.Context) (*Pad, error) { return md, nil }, Options{})
	jsonOpts := Options{Format: FormatJSON}
	js := newPad(t, jsonOpts)
	jsh := newHarness(t, func(context.Context) (*Pad, error) { return js, nil }, jsonOpts)
	ctx := WithAuthor(context.Background(), "alice")
	for _, tc := range []struct {
		name string
		h    *harness
		tool string
		args string
		want []string // each in the answer
	}{
		{"required", mdh, ToolAppend, `{}`, []string{`"error":"invalid_arguments"`, "note is required"}},
		{"type string", mdh, ToolAppend, `{"note":7}`, []string{`"error":"invalid_arguments"`, "note must be a string, not an integer"}},
		{"type array", mdh, ToolRead, `{"keys":"k"}`, []string{`"error":"invalid_arguments"`, "keys must be an array, not a string"}},
		{"type integer", mdh, ToolRead, `{"max_tokens":"5"}`, []string{`"error":"invalid_arguments"`, "max_tokens must be an integer, not a string"}},
		{"type boolean", mdh, ToolUpdate, `{"clear":"yes"}`, []string{`"error":"invalid_arguments"`, "clear must be a boolean, not a string"}},
		{"type object", jsh, ToolUpdate, `{"state":[1]}`, []string{`"error":"invalid_arguments"`, "state must be an object, not an array"}},
		{"enum", mdh, ToolRead, `{"format":"yaml"}`, []string{`"error":"invalid_arguments"`, `format must be one of \"markdown\", \"xml\", \"json\", \"kv\"`}},
		{"minimum", mdh, ToolRead, `{"max_tokens":0}`, []string{`"error":"invalid_arguments"`, "max_tokens must be at least 1"}},
		{"maximum", mdh, ToolRead, `{"max_tokens":1000001}`, []string{`"error":"invalid_arguments"`, "max_tokens must be at most 1000000"}},
		{"maxLength", mdh, ToolAppend, `{"note":"` + strings.Repeat("n", 4001) + `"}`, []string{`"error":"invalid_arguments"`, "note must be at most 4000 characters, not 4001"}},
		{"maxItems", mdh, ToolAppend, `{"note":"n","tags":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, []string{`"error":"invalid_arguments"`, "tags must have at most 16 items, not 17"}},
		{"items maxLength", mdh, ToolRead, `{"keys":["` + strings.Repeat("k", 131) + `"]}`, []string{`"error":"invalid_arguments"`, "keys item 0 must be at most 130 characters, not 131"}},
		{"items type", mdh, ToolUpdate, `{"patches":[3]}`, []string{`"error":"invalid_arguments"`, "patches item 0 must be an object, not an integer"}},
		{"unknown", mdh, ToolAppend, `{"note":"n","by":"me"}`, []string{`"error":"invalid_arguments"`, `unknown argument(s) \"by\" (this tool takes: note, tags)`}},
		{"open: a state key", jsh, ToolUpdate, `{"goal":"ship"}`, []string{"updated"}},
		{"null is absent", jsh, ToolUpdate, `{"state":null,"patches":null,"content":null,"owner":"me"}`, []string{"updated", "owner"}},
		{"open: case variant", jsh, ToolUpdate, `{"Clear":true}`, []string{`"error":"invalid_arguments"`, `did you mean clear?`}},

		// Inside a patch.
		{"patch enum section", mdh, ToolUpdate, `{"patches":[{"section":"Task","op":"append","content":"a"},{"section":"Vibes","op":"append","content":"x"}]}`,
			[]string{`"error":"unknown_section"`, `unknown section \"Vibes\" (sections: Task, Plan, Findings, Ruled out, Open questions, Next)`, `"patch":2`, `"sections":["Task","Plan","Findings","Ruled out","Open questions","Next"]`, `"state_unchanged":true`}},
		{"patch enum op", mdh, ToolUpdate, `{"patches":[{"section":"Plan","op":"tick"}]}`, []string{`"error":"unknown_op"`, `unknown op \"tick\"`, `"ops":[`, `"patch":1`}},
		{"patch required op", mdh, ToolUpdate, `{"patches":[{"section":"Plan","content":"x"}]}`, []string{`"error":"unknown_op"`, `"patch":1`}},
		{"patch maxLength", mdh, ToolUpdate, `{"patches":[{"op":"set","key":"` + strings.Repeat("k", 129) + `","value":1}]}`, []string{`"error":"bad_patch"`, "key must be at most 128 characters, not 129", `"patch":1`}},
		{"patch minimum", mdh, ToolUpdate, `{"patches":[{"op":"set","key":"k","value":1,"ttl":-1}]}`, []string{`"error":"bad_patch"`, "ttl must be at least 0", `"patch":1`}},
		{"patch maximum", mdh, ToolUpdate, `{"patches":[{"op":"set","key":"k","value":1,"ttl":31536001}]}`, []string{`"error":"bad_patch"`, "ttl must be at most 31536000"}},
		{"patch maxItems", mdh, ToolUpdate, `{"patches":[{"op":"set","key":"k","value":1,"tags":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}]}`, []string{`"error":"bad_patch"`, "tags must have at most 16 items, not 17"}},
		{"patch type", mdh, ToolUpdate, `{"patches":[{"op":"set","key":"k","value":1,"sliding":"yes"}]}`, []string{`"error":"invalid_arguments"`, "patches item 0 sliding must be a boolean, not a string"}},
		{"patch lenient content", mdh, ToolUpdate, `{"patches":[{"section":"Plan","op":"append","content":"a"},{"section":"Plan","op":"check","content":1}]}`, []string{"updated", "[x] a"}},
		{"structured pad: a section op", jsh, ToolUpdate, `{"patches":[{"section":"Task","op":"append","content":"x"}]}`, []string{`"error":"wrong_format"`}},
		{"structured pad: op enum", jsh, ToolUpdate, `{"patches":[{"op":"frob"}]}`, []string{`"error":"wrong_format"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.h.defs[tc.tool].Handler(ctx, json.RawMessage(tc.args)).Text
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s %.120s: %.400s\nwant %s", tc.tool, tc.args, text, w)
				}
			}
		})
	}
}
