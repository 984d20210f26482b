package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestStdioFilter(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("x", 10000) + `"}}`
	for _, tc := range []struct {
		name, in   string
		max        int
		pass       string // what go-sdk reads
		answerCode int    // 0: no answer
		answerID   string
	}{
		{"valid", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", 1 << 20, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", 0, ""},
		{"CRLF and blank lines", "\r\n\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\r\n", 1 << 20, `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", 0, ""},
		{"no final newline", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, 1 << 20, `{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n", 0, ""},
		// A batch is split (rawwire.go joins its answers again).
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n", 1 << 20, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", 0, ""},
		// ids go-sdk would not answer as sent (ids.go)
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n", 1 << 20, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}` + "\n", 0, ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}` + "\n", 1 << 20, "", -32600, "null"},
		{"duplicate in flight", `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n", 1 << 20, `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n", -32600, "4"},
		{"cancel of a replaced id", `{"jsonrpc":"2.0","id":1e2,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e2}}` + "\n", 1 << 20,
			`{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"scratchpad-mcp/id:1"}}` + "\n", 0, ""},
		{"cancel go-sdk would misread", `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2.5}}` + "\n", 1 << 20,
			`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n", 0, ""},
		{"not JSON", "not json\n", 1 << 20, "", -32700, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":3,"method":"ping"}` + "\n", 1 << 20, "", -32600, "3"},
		{"object id", `{"jsonrpc":"1.0","id":{},"method":"ping"}` + "\n", 1 << 20, "", -32600, "null"},
		{"too long", long + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", 48, `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n", -32600, "null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			got := filterAll(t, tc.in, tc.max, &out)
			if got != tc.pass {
				t.Errorf("passed on %q, want %q", got, tc.pass)
			}
			if tc.answerCode == 0 {
				if out.Len() != 0 {
					t.Errorf("answered %s", out.Bytes())
				}
				return
			}
			var ans struct {
				ID    json.RawMessage
				Error struct{ Code int }
			}
			if err := json.Unmarshal(out.Bytes(), &ans); err != nil || ans.Error.Code != tc.answerCode || string(ans.ID) != tc.answerID {
				t.Errorf("answer %s, want code %d id %s", out.Bytes(), tc.answerCode, tc.answerID)
			}
		})
	}
}

// filterAll runs the filter over in and returns what it passes on.
func filterAll(t *testing.T, in string, max int, out io.Writer) string {
	t.Helper()
	b, err := io.ReadAll(stdioFilter(bufio.NewReaderSize(strings.NewReader(in), 16), out, max, &callIDs{}, nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
