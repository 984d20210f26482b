package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestRawWireWritesTheUpstreamsBytesOnOneLine(t *testing.T) {
	var out bytes.Buffer
	tr := &rawStdio{in: io.NopCloser(strings.NewReader("")), out: &out, wire: &rawWire{}}
	c, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := jsonrpc.MakeID(float64(7))
	for _, raw := range []string{`{"content":[{"type":"text","text":"a\nb"}],"x" : 1}`, "{\n  \"content\": []\n}"} {
		out.Reset()
		ph := tr.wire.put(json.RawMessage(raw))
		if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: ph}); err != nil {
			t.Fatal(err)
		}
		line := out.String()
		if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
			t.Fatalf("not one line: %q", line)
		}
		var m struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.ID != 7 {
			t.Fatalf("%q: %v", line, err)
		}
		var want bytes.Buffer
		_ = json.Compact(&want, []byte(raw))
		if !strings.Contains(raw, "\n  ") && string(m.Result) != raw || strings.Contains(raw, "\n  ") && string(m.Result) != want.String() {
			t.Fatalf("result %s, want %s", m.Result, raw)
		}
	}
	if len(tr.wire.pending) != 0 {
		t.Fatal("entries left in the table")
	}
	// Anything else goes through go-sdk's encoding.
	out.Reset()
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"ok":true}`)}); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`+"\n" {
		t.Fatalf("%q", got)
	}
}
