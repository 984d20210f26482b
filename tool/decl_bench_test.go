package tool

import (
	"encoding/json"
	"testing"
)

// windowArgs are an exploration call's arguments (iterate_over's shape):
// strings, bounded integers, a pointer, an enum — decoded by the direct
// assigner. declArgs has raw JSON and an any, decoded by encoding/json.
type windowArgs struct {
	fileArg
	Path   string `json:"path,omitempty" arg:"maxLength=4096"`
	Fields string `json:"fields,omitempty" arg:"maxLength=4096"`
	Offset *int   `json:"offset,omitempty" arg:"minimum=0,maximum=100000000"`
	Limit  *int   `json:"limit,omitempty" arg:"minimum=0,maximum=100000000"`
	Order  string `json:"order,omitempty" arg:"enum=asc|desc"`
}

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
	w := MustArgs[windowArgs](declOpts)
	if w.assign == nil {
		b.Fatal("windowArgs is not decoded directly")
	}
	b.Run("direct/raw", func(b *testing.B) {
		raw := json.RawMessage(`{"file":"app.log","path":"results","fields":"id,title,metadata.author.login","offset":100000,"limit":50,"order":"asc"}`)
		for b.Loop() {
			if _, ps := w.Decode(raw); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("direct/ints", func(b *testing.B) {
		// slice's shape: two bounded integers.
		args := map[string]any{"file": "app.log", "offset": 1000000, "limit": 50}
		for b.Loop() {
			if _, ps := w.DecodeValue(args); ps != nil {
				b.Fatal(ps)
			}
		}
	})
	b.Run("direct/value", func(b *testing.B) {
		args := map[string]any{"file": "app.log", "path": "results", "fields": "id,title,metadata.author.login", "offset": 100000, "limit": 50, "order": "asc"}
		for b.Loop() {
			if _, ps := w.DecodeValue(args); ps != nil {
				b.Fatal(ps)
			}
		}
	})
}
