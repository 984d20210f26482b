package upstream

import (
	"bytes"
	"runtime"
	"testing"
)

// Reading a big message keeps the message and nothing else: the buffer it
// outgrew is returned once the bytes have moved, not when the next message
// comes (until then the process would hold half as much again).
func TestBigMessageLeavesNoOldBuffer(t *testing.T) {
	const size = 40 << 20 // grows 32 MiB → 64 MiB at the end
	input := append(bytes.Repeat([]byte("a"), size), '\n')
	for _, c := range []struct {
		name string
		read func() []byte
	}{
		{"lines", func() []byte {
			line, _, err := newLineReader(bytes.NewReader(input), 0).next()
			if err != nil {
				t.Fatal(err)
			}
			return line
		}},
		{"sse", func() []byte {
			ev := append([]byte("data: "), input...)
			r := newSSEReader(bytes.NewReader(append(ev, '\n')))
			e, err := r.next()
			if err != nil {
				t.Fatal(err)
			}
			return e.data
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			line := c.read()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			// The input (sse: and its copy), the line's buffer, slack.
			limit := uint64(2*len(input) + cap(line) + 16<<20)
			if len(line) != size || m.HeapInuse > limit {
				t.Fatalf("line %d bytes (cap %d): heap in use %d MiB, want at most %d", len(line), cap(line), m.HeapInuse>>20, limit>>20)
			}
			runtime.KeepAlive(line)
		})
	}
}

// A message of a few megabytes read after a big one (dead, not yet
// collected) returns it: the new message does not grow on top of the old.
func TestEarlierBigMessageIsReturned(t *testing.T) {
	runtime.GC()
	earlier, _, err := newLineReader(bytes.NewReader(append(bytes.Repeat([]byte("b"), 40<<20), '\n')), 0).next()
	if err != nil || len(earlier) != 40<<20 {
		t.Fatal(err)
	}
	earlier = nil // its 64 MiB buffer is garbage now, and not collected
	input := append(bytes.Repeat([]byte("a"), 6<<20), '\n')
	line, _, err := newLineReader(bytes.NewReader(input), 0).next()
	if err != nil {
		t.Fatal(err)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if limit := uint64(len(input) + 8<<20 + 32<<20); m.HeapInuse > limit {
		t.Fatalf("heap in use %d MiB after a 6 MiB line, want at most %d: the earlier message is still held", m.HeapInuse>>20, limit>>20)
	}
	runtime.KeepAlive(line)
}
