package upstream

import (
	"bytes"
	"fmt"
	"testing"
)

// Reading one big line, as the stdio client does, including the
// collections that return the buffers a line outgrows (from 4 MiB).
func BenchmarkLineReader(b *testing.B) {
	for _, mb := range []int{1, 6, 24} {
		input := append(bytes.Repeat([]byte("a"), mb<<20), '\n')
		b.Run(fmt.Sprintf("%dMiB", mb), func(b *testing.B) {
			b.SetBytes(int64(len(input)))
			for i := 0; i < b.N; i++ {
				if _, _, err := newLineReader(bytes.NewReader(input), 0).next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
