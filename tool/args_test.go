package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	schema := Object(
		String("file", "", Required()),
		Integer("lines", "", Default(50)),
		Boolean("ignore_case", ""),
		String("order", "", Enum("asc", "desc")),
	)
	params := MustParams(schema)
	if p := params["file"]; !p.Required || p.Type != "string" {
		t.Fatalf("file: %+v", p)
	}
	for _, tc := range []struct {
		name, args, want, problems string
	}{
		{"defaults filled", `{"file":"a.log"}`, `{"file":"a.log","lines":50}`, ""},
		{"given kept", `{"file":"a.log","lines":3,"order":"asc"}`, `{"file":"a.log","lines":3,"order":"asc"}`, ""},
		{"unknown passes", `{"file":"a","extra":[1]}`, `{"extra":[1],"file":"a","lines":50}`, ""},
		{"null is absent", `{"file":"a","lines":null}`, `{"file":"a","lines":50}`, ""},
		{"all problems at once", `{"lines":1.5,"ignore_case":"yes","order":"up"}`, "", "file is required; ignore_case must be a boolean, not a string; lines must be an integer, not a number; order must be one of \"asc\", \"desc\""},
		{"not an object", `"file"`, "", "the arguments must be one JSON object"},
		{"no arguments", ``, "", "file is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := CheckArgs(params, json.RawMessage(tc.args))
			if p := strings.Join(problems, "; "); p != tc.problems {
				t.Fatalf("problems %q, want %q", p, tc.problems)
			}
			if tc.want == "" {
				return
			}
			var g, w any
			_ = json.Unmarshal(got, &g)
			_ = json.Unmarshal([]byte(tc.want), &w)
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			if string(gb) != string(wb) {
				t.Fatalf("args %s, want %s", got, tc.want)
			}
		})
	}
}
