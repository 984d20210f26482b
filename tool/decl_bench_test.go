package tool

import (
	"encoding/json"
	"testing"
)

// BenchmarkDecode is one call's arguments validated and decoded: as a
// model sends them (raw JSON) and as Go code passes them (values).
func BenchmarkDecode(b *testing.B) {
	a := MustArgs[declArgs](declOpts)
	raw := json.RawMessage(`{"file":"app.log","lines":50,"limit":20,"order":"asc","tags":["a","b"]}`)
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			if _, ps := a.Decode(raw); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("value", func(b *testing.B) {
		args := map[string]any{"file": "app.log", "lines": 50, "limit": 20, "order": "asc", "tags": []any{"a", "b"}}
		for b.Loop() {
			if _, ps := a.DecodeValue(args); ps != nil {
				b.Fatal(ps)
			}
		}
	})
}
