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

// A big line after another grows to about the last one's length at once
// (a smaller buffer than doubling would make, and fewer bytes moved), and
// a line much shorter than the last is not given the last one's size.
func TestLineBufferSizedByTheLastBigLine(t *testing.T) {
	big := append(bytes.Repeat([]byte("a"), 6<<20), '\n')
	small := append(bytes.Repeat([]byte("b"), 100<<10), '\n')
	lr := newLineReader(bytes.NewReader(bytes.Join([][]byte{big, big, small}, nil)), 0)
	var grown, moved []int
	for i, want := range [][]byte{big, big, small} {
		line, _, err := lr.next()
		if err != nil || !bytes.Equal(line, want[:len(want)-1]) {
			t.Fatalf("line %d: %d bytes, %v", i, len(line), err)
		}
		grown, moved = append(grown, lr.grown), append(moved, lr.moved)
	}
	if grown[0] != 8<<20 {
		t.Fatalf("first line grew to %d bytes, want 8 MiB (doubled from 64 KiB)", grown[0])
	}
	if most := len(big) + len(big)/8; grown[1] < len(big) || grown[1] > most || moved[1] >= moved[0]/2 {
		t.Fatalf("second line grew to %d bytes moving %d, want between %d and %d, moving less than half the first's %d", grown[1], moved[1], len(big), most, moved[0])
	}
	if grown[2] > 256<<10 {
		t.Fatalf("a 100 KiB line after a 6 MiB one grew to %d bytes", grown[2])
	}
}

// The SSE reader does the same, across the streams of one connection (a
// streamable HTTP upstream answers every POST on a stream of its own).
func TestSSEBufferSizedByTheLastBigLine(t *testing.T) {
	event := append(append([]byte("data: "), bytes.Repeat([]byte("a"), 6<<20)...), '\n', '\n')
	first := newSSEReader(bytes.NewReader(event))
	if _, err := first.next(); err != nil {
		t.Fatal(err)
	}
	second := newSSEReader(bytes.NewReader(event))
	second.hint = first.hint // as httpConn.readAnswer shares its lineHint
	ev, err := second.next()
	if err != nil || len(ev.data) != 6<<20 {
		t.Fatalf("%d bytes, %v", len(ev.data), err)
	}
	if most := len(event) + len(event)/8; second.grown == 0 || second.grown > most {
		t.Fatalf("second stream's line grew to %d bytes, want at most %d (the first's grew to %d)", second.grown, most, first.grown)
	}
}
