package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// BenchmarkEncodeRawResult is what go-sdk's streamable HTTP handler does to
// a forwarded 24 MB tools/call result, twice (the handler's result, then
// the response): encoding/json with HTML escaping off, over a
// json.RawMessage, which it validates and compacts. The figure behind
// README's "encodes the result twice"; GOEXPERIMENT=jsonv2 runs it on the
// v2 implementation.
func BenchmarkEncodeRawResult(b *testing.B) {
	res, err := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": testupstream.Blob("json", 24)}}})
	if err != nil {
		b.Fatal(err)
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int             `json:"id"`
		Result  json.RawMessage `json:"result"`
	}
	b.SetBytes(int64(len(res)))
	for b.Loop() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(response{"2.0", 1, res}); err != nil {
			b.Fatal(err)
		}
	}
}
