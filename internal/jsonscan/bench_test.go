package jsonscan

import (
	"encoding/json"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// BenchmarkValid: a 24 MB tools/call answer (a JSON listing held as text,
// as the wire benchmark's upstream sends it) and the listing itself, against
// gjson's validator and encoding/json's.
func BenchmarkValid(b *testing.B) {
	for _, in := range benchInputs() {
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{{"jsonscan", Valid}, {"gjson", gjson.ValidBytes}, {"encoding_json", json.Valid}} {
			b.Run(in.name+"/"+v.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.b)))
				for b.Loop() {
					if !v.valid(in.b) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}

// BenchmarkStream: the 24 MB answer through a Stream in 64 KiB pieces (as
// a pipe delivers it), against Scan over the whole.
func BenchmarkStream(b *testing.B) {
	for _, in := range benchInputs() {
		b.Run(in.name+"/stream", func(b *testing.B) {
			b.SetBytes(int64(len(in.b)))
			for b.Loop() {
				s := Stream{Inner: "result"} // as the upstream's readers run it
				for p := in.b; len(p) > 0; p = p[min(len(p), 64<<10):] {
					_, _ = s.Write(p[:min(len(p), 64<<10)])
				}
				if _, err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/scan", func(b *testing.B) {
			b.SetBytes(int64(len(in.b)))
			for b.Loop() {
				if err := Scan(in.b, func(k, v []byte) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchInput struct {
	name string
	b    []byte
}

// benchInputs: a 24 MB tools/call answer holding a JSON listing as text,
// and the listing itself.
func benchInputs() []benchInput {
	listing := []byte(testupstream.Blob("json", 24))
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": string(listing)}}}})
	return []benchInput{{"answer", answer}, {"listing", listing}}
}
