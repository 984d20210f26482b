package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// TestResultTypeFoundWhileReading: the resultType of a long answer (read
// and validated as it arrived) comes with it from the reader, equal to
// what wire.ParseResultType finds walking the result; a short answer's,
// or one whose key is written with escapes, is left to the caller ("").
func TestResultTypeFoundWhileReading(t *testing.T) {
	text := strings.Repeat(`a\"b\\c `, 3*lineChunk/7) // a long line
	for _, c := range []struct {
		name, result, want string
	}{
		{"long, none", `{"content":[{"type":"text","text":"` + text + `"}]}`, wire.ResultComplete},
		{"long, task after the text", `{"content":[{"type":"text","text":"` + text + `"}],"resultType":"task","task":{"taskId":"t"}}`, wire.ResultTask},
		{"long, nested resultType only", `{"content":[{"type":"text","text":"` + text + `"}],"structuredContent":{"resultType":"task"}}`, wire.ResultComplete},
		{"long, repeated: the last", `{"resultType":"task","content":[{"type":"text","text":"` + text + `"}],"resultType":"complete"}`, wire.ResultComplete},
		{"long, escaped key", `{"content":[{"type":"text","text":"` + text + `"}],"resultT\u0079pe":"task"}`, ""},
		{"short", `{"resultType":"task","task":{"taskId":"t"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			answer := filepath.Join(dir, "answer")
			if err := os.WriteFile(answer, []byte(`{"jsonrpc":"2.0","id":1,"result":`+c.result+"}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			conn, err := startStdio("typed", []string{"sh", "-c", `read line; cat ` + answer + `; exec cat >/dev/null`}, nil, "", handlers{}, quietLogger())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer cancel()
			res, typ, err := conn.callTyped(ctx, "tools/call", map[string]any{"name": "x"})
			if err != nil {
				t.Fatal(err)
			}
			if typ != c.want {
				t.Fatalf("resultType from the reader %q, want %q", typ, c.want)
			}
			if typ != "" && typ != wire.ParseResultType(res) {
				t.Fatalf("resultType from the reader %q, walking the result %q", typ, wire.ParseResultType(res))
			}
		})
	}
}
