package proxy

import (
	"encoding/json"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// TestRedactedMetaSaysBinary: a result that looked like binary content
// was scanned all the same, and its _meta says what it looked like —
// with a secret masked beside the NUL bytes, and without one.
func TestRedactedMetaSaysBinary(t *testing.T) {
	red, err := redact.New(redact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	token := "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
	for _, tc := range []struct {
		name, text, binary string
		total              float64
	}{
		{"secret beside NUL bytes", "a\x00b\x00 " + token + " \x00", "binary: 3 NUL bytes", 1},
		{"no secret", "a\x00b\x00c", "binary: 2 NUL bytes", 0},
		{"plain text", "nothing here", "", -1},
	} {
		out, rep, err := red.Text(nil, []byte(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(out)}}})
		got := withRedactedMeta(res, redacted{mode: redact.Mask, rep: rep})
		var m struct {
			Meta map[string]map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s: %v in %s", tc.name, err, got)
		}
		meta := m.Meta[RedactedMetaKey]
		if tc.total < 0 {
			if meta != nil {
				t.Errorf("%s: _meta %v", tc.name, meta)
			}
			continue
		}
		if meta["binary"] != tc.binary {
			t.Errorf("%s: binary %v in %s", tc.name, meta["binary"], got)
		}
		if tot, _ := meta["total"].(float64); tot != tc.total || tc.total == 0 && meta["counts"] != nil {
			t.Errorf("%s: total %v, want %v", tc.name, meta["total"], tc.total)
		}
	}
}
