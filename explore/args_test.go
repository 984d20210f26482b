package explore

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryConstraintKind: each kind of constraint the exploration tools'
// declarations carry, refused by the validator with invalid_arguments
// (pattern_too_long for a pattern past its length) whether the call comes
// as a model's raw JSON (the handler) or as Go values (Call); and the
// explore subcommand's strings, read as the declared integers and
// booleans by the shim, then validated alike.
func TestEveryConstraintKind(t *testing.T) {
	env := fixtureEnv(t)
	handlers := map[string]func(context.Context, json.RawMessage) string{}
	for _, d := range Tools(func(context.Context) (*Env, error) { return env, nil }) {
		handlers[d.Name] = func(ctx context.Context, raw json.RawMessage) string { return d.Handler(ctx, raw).Text }
	}
	long := strings.Repeat("é", maxPathChars+1)
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code, want string // want: in the answer
	}{
		{"required", ToolSlice, map[string]any{"file": "app.log", "start": 1}, "invalid_arguments", "end is required"},
		{"required file", ToolHead, map[string]any{}, "invalid_arguments", "file is required"},
		{"type integer", ToolHead, map[string]any{"file": "app.log", "lines": 2.5}, "invalid_arguments", "lines must be an integer, not a number"},
		{"type integer, an array", ToolHead, map[string]any{"file": "app.log", "lines": []any{1}}, "invalid_arguments", "lines must be an integer, not an array"},
		{"type string", ToolGetIn, map[string]any{"file": "pods.json", "path": 3}, "invalid_arguments", "path must be a string, not an integer"},
		{"type boolean", ToolGrep, map[string]any{"file": "app.log", "pattern": "x", "ignore_case": 1}, "invalid_arguments", "ignore_case must be a boolean, not an integer"},
		{"enum", ToolIterateOver, map[string]any{"file": "pods.json", "path": "items", "fields": "kind", "sort_by": "kind", "order": "up"}, "invalid_arguments", `order must be one of \"asc\", \"desc\"`},
		{"minimum", ToolSlice, map[string]any{"file": "app.log", "start": 0, "end": 2}, "invalid_arguments", "start must be at least 1"},
		{"minimum zero", ToolGetIn, map[string]any{"file": "pods.json", "path": "items", "offset": -1}, "invalid_arguments", "offset must be at least 0"},
		{"maximum", ToolGrep, map[string]any{"file": "app.log", "pattern": "x", "context": maxContext + 1}, "invalid_arguments", "context must be at most 1000"},
		{"maxLength", ToolGetIn, map[string]any{"file": "pods.json", "path": long}, "invalid_arguments", "path must be at most 4096 characters, not 4097"},
		{"maxLength of a pattern", ToolGrep, map[string]any{"file": "app.log", "pattern": strings.Repeat("x", MaxPatternBytes+1)}, "pattern_too_long", "grep accepts at most 1024"},
		{"maxLength of count_by's pattern", ToolCountBy, map[string]any{"file": "app.log", "pattern": strings.Repeat("x", MaxPatternBytes+1)}, "pattern_too_long", "count_by accepts at most 1024"},
		{"unknown", ToolRead, map[string]any{"file": "app.log", "lines": 3}, "invalid_arguments", `unknown argument(s) \"lines\" (this tool takes: file)`},
		{"case variant", ToolHead, map[string]any{"file": "app.log", "Lines": 3}, "invalid_arguments", `\"Lines\" is not an argument (names are case-sensitive): did you mean lines?`},
		{"every problem at once", ToolSlice, map[string]any{"file": "app.log", "start": "one", "end": 0}, "invalid_arguments", "end must be at least 1; start must be an integer, not a string."},
		{"between arguments", ToolIterateOver, map[string]any{"file": "pods.json", "path": "items", "fields": "kind", "order": "asc"}, "invalid_arguments", "order needs sort_by"},
		{"at the bounds", ToolSlice, map[string]any{"file": "app.log", "start": 1, "end": 1.0}, "", "app.log (lines [1..2)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := json.Marshal(tc.args)
			for how, got := range map[string]string{"handler": handlers[tc.tool](context.Background(), raw), "Call": run(t, env, tc.tool, tc.args)} {
				if errCode(got) != tc.code || !strings.Contains(got, tc.want) {
					t.Errorf("%s: %.300s\nwant %s %s", how, got, tc.code, tc.want)
				}
			}
		})
	}
}

// TestSubcommandStrings: the explore subcommand passes key=value strings;
// the shim reads the declared integers and booleans from them and leaves
// the rest to the validator, as a model's call.
func TestSubcommandStrings(t *testing.T) {
	env := fixtureEnv(t)
	for _, tc := range []struct {
		tool       string
		args       map[string]any
		code, want string
	}{
		{ToolSlice, map[string]any{"file": "app.log", "start": "1", "end": " 2 "}, "", "app.log (lines [1..3)"},
		{ToolGrep, map[string]any{"file": "app.log", "pattern": "error", "ignore_case": "true", "max_matches": "1", "context": "0"}, "", "ERROR"},
		{ToolSlice, map[string]any{"file": "app.log", "start": "one", "end": "2"}, "invalid_arguments", "start must be an integer, not a string"},
		{ToolGrep, map[string]any{"file": "app.log", "pattern": "x", "ignore_case": "maybe"}, "invalid_arguments", "ignore_case must be a boolean, not a string"},
		{ToolHead, map[string]any{"file": "app.log", "lines": "100001"}, "invalid_arguments", "lines must be at most 100000"},
		{ToolGetIn, map[string]any{"file": "pods.json", "path": "items", "filter": "?(@.kind == 'Pod')", "limit": "1"}, "", "Pod"},
	} {
		if got := run(t, env, tc.tool, tc.args); errCode(got) != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %.300s\nwant %s %s", tc.tool, tc.args, got, tc.code, tc.want)
		}
	}
}
