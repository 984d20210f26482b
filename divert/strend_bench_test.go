package divert

import (
	"encoding/json"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

func BenchmarkStringEnd(b *testing.B) {
	for _, format := range []string{"json", "text", "ndjson"} {
		lit, _ := json.Marshal(testupstream.Blob(format, 4))
		s := string(lit)
		for name, f := range map[string]func(string, int) int{"words": stringEndStr, "bytes": stringEndByBytes} {
			b.Run(format+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for i := 0; i < b.N; i++ {
					if f(s, 0) != len(s) {
						b.Fatal("end")
					}
				}
			})
		}
	}
}
