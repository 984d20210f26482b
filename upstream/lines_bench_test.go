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

// The same line again and again from one reader (an upstream answering
// the same tool call): after the first, each grows at once to about the
// last one's length (lineReader.hint) instead of doubling up to it.
func BenchmarkLineReaderAgain(b *testing.B) {
	for _, mb := range []int{6, 24} {
		input := append(bytes.Repeat([]byte("a"), mb<<20), '\n')
		b.Run(fmt.Sprintf("%dMiB", mb), func(b *testing.B) {
			lr := newLineReader(&cycle{b: input}, 0)
			if _, _, err := lr.next(); err != nil { // the first sets the hint
				b.Fatal(err)
			}
			b.SetBytes(int64(len(input)))
			for b.Loop() {
				if line, _, err := lr.next(); err != nil || len(line) != len(input)-1 {
					b.Fatal(err, len(line))
				}
			}
		})
	}
}

// cycle reads b over and over, 64 KiB at a time at most (a pipe's
// reads).
type cycle struct {
	b   []byte
	off int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p[:min(len(p), 64<<10)], c.b[c.off:])
	c.off = (c.off + n) % len(c.b)
	return n, nil
}
