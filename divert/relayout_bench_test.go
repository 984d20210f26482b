package divert

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// BenchmarkRelayout: reading a pretty-printed 24 MB listing back as compact
// JSON, as the background count does.
func BenchmarkRelayout(b *testing.B) {
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(testupstream.Blob("json", 24)), "", "  "); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(pretty.Len()))
	for b.Loop() {
		if _, err := io.Copy(io.Discard, newRelayout(bytes.NewReader(pretty.Bytes()), false)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIndent: pretty-printing a 24 MB listing as Save does, into
// io.Discard (the write, hash and sync left out).
func BenchmarkIndent(b *testing.B) {
	t := []byte(testupstream.Blob("json", 24))
	b.SetBytes(int64(len(t)))
	for b.Loop() {
		if _, err := indentTo(io.Discard, t, arrayLengths{}, containerEnds{}); err != nil {
			b.Fatal(err)
		}
	}
}
