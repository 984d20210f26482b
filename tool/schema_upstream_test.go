package tool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSchemaValidate(t *testing.T) {
	// server-filesystem's write_file, as it lists it (draft-07).
	writeFile := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`
	s, err := CompileSchema(json.RawMessage(writeFile))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, args string
		want       []string // messages
	}{
		{"valid", `{"path":"/a","content":"x"}`, nil},
		{"an object for a string", `{"path":"/a","content":{"$scratchpad":{"file":"f"}}}`, []string{"content must be a string, not an object"}},
		{"missing", `{"path":"/a"}`, []string{"content is required"}},
		{"no arguments", ``, []string{"content is required", "path is required"}},
		{"not an object", `[1]`, []string{"must be an object, not an array"}},
		{"huge number", `{"path":"/a","content":"x","n":1e999999}`, []string{"n is 1e999999, outside the numbers this server reads (within ±1e308, exponents within ±400)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Messages(s.Validate(json.RawMessage(c.args)))
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("problems %q, want %q", got, c.want)
			}
		})
	}
}

func TestCompileSchemaRefusesWhatItCannotJudge(t *testing.T) {
	for _, raw := range []string{
		`{"type":`,
		`{"$ref":"https://example.com/remote.json"}`,
		`{"$ref":"file:///etc/passwd"}`,
		`{"type":"string","pattern":"("}`,
	} {
		if _, err := CompileSchema(json.RawMessage(raw)); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: err %v, want ErrSchema", raw, err)
		}
	}
}
