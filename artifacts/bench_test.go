package artifacts

import (
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// BenchmarkWrite measures one atomic artifact write of 64 KiB (temp file,
// fsync, rename, directory fsync).
func BenchmarkWrite(b *testing.B) {
	s, err := Open(memdir.At(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("0123456789abcdef", 4096)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := s.Write("bench.json", content); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadNotFound measures the not-found answer over 1,000
// artifacts: a directory listing, sort and cap.
func BenchmarkReadNotFound(b *testing.B) {
	s, err := Open(memdir.At(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := s.Write("f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i/26)+".md", "x"); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		res, err := s.Read("missing.md", 0)
		if err != nil || len(res.Available) != MaxAvailable {
			b.Fatal(res.AvailableOmitted, err)
		}
	}
}
