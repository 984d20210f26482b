package wire

import (
	"encoding/json"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestResultTypeOfMembers: given the members, the answer is
// ParseResultType's; an escaped key leaves it to ParseResultType.
func TestResultTypeOfMembers(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string
		ok   bool
	}{
		{`{}`, ResultComplete, true},
		{`{"content":[],"resultType":"task"}`, ResultTask, true},
		{`{"resultType":"task","resultType":"input_required"}`, ResultInputRequired, true},
		{`{"resultType":7}`, ResultComplete, true},
		{`{"resultType":"t\u0061sk"}`, ResultTask, true},
		{`{"structuredContent":{"resultType":"task"}}`, ResultComplete, true},
		{`{"resultT\u0079pe":"task"}`, "", false},
	} {
		members, err := jsonscan.Members([]byte(c.raw))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ResultTypeOfMembers([]byte(c.raw), members)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.raw, got, ok, c.want, c.ok)
		}
		if ok && got != ParseResultType([]byte(c.raw)) {
			t.Errorf("%s: %q, ParseResultType %q", c.raw, got, ParseResultType([]byte(c.raw)))
		}
	}
}

// BenchmarkParseResultType: what asking a 24 MB result (JSON held as
// text) its type costs by walking it, the cost the upstream's reader now
// saves by finding the members as the answer arrives.
func BenchmarkParseResultType(b *testing.B) {
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": testupstream.Blob("json", 24)}}})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if ParseResultType(raw) != ResultComplete {
			b.Fatal("not complete")
		}
	}
}
