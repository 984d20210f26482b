package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// stringEndByBytes is StringEnd as a plain byte loop: the reference.
func stringEndByBytes(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\"b"`, `"\\"`, `"\\\""x`, `"12345678"`, `"1234567\"9012345678"`,
		`"abcdefghijklmnopqrstuvwxyz\\`, `"abcdefg\`, `"` + strings.Repeat(`{\"k\":\"v\"},`, 20) + `"`, `"ü\"€"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := 0; i < len(b) && i < 24; i++ {
			if got, want := StringEnd(b, i), stringEndByBytes(b, i); got != want {
				t.Fatalf("%q from %d: %d, want %d", s, i, got, want)
			}
		}
		want := -1
		for i, c := range b {
			if c == '"' || c == '\\' {
				want = i
				break
			}
		}
		if got := IndexQuoteOrBackslash(b); got != want {
			t.Fatalf("%q: IndexQuoteOrBackslash %d, want %d", s, got, want)
		}
	})
}

func BenchmarkStringEnd(b *testing.B) {
	for _, format := range []string{"json", "text", "ndjson"} {
		lit, _ := json.Marshal(testupstream.Blob(format, 4))
		for name, f := range map[string]func([]byte, int) int{"words": StringEnd, "bytes": stringEndByBytes} {
			b.Run(format+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(lit)))
				for b.Loop() {
					if f(lit, 0) != len(lit) {
						b.Fatal("end")
					}
				}
			})
		}
	}
}
