package divert

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// limitedWriter takes n bytes, then fails as a full disk would.
type limitedWriter struct {
	bytes.Buffer
	n int
}

var errFull = errors.New("no space left on device")

func (w *limitedWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.n {
		return 0, errFull
	}
	return w.Buffer.Write(p)
}

func TestWriteBehindKeepsOrderAndReportsErrors(t *testing.T) {
	in := []byte(strings.Repeat("0123456789abcdef", 1<<18)) // 4 MiB
	var ok limitedWriter
	ok.n = len(in)
	w := newWriteBehind(&ok)
	for p := in; len(p) > 0; p = p[min(len(p), 300_000):] {
		if _, err := w.Write(p[:min(len(p), 300_000)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || !bytes.Equal(ok.Bytes(), in) {
		t.Fatalf("%v, %d bytes written of %d, equal %v", err, ok.Len(), len(in), bytes.Equal(ok.Bytes(), in))
	}

	full := &limitedWriter{n: 1 << 20}
	w = newWriteBehind(full)
	var werr error
	for i := 0; i < 64 && werr == nil; i++ {
		_, werr = w.Write(in[:1<<20])
	}
	if err := w.Close(); !errors.Is(err, errFull) {
		t.Fatalf("Close: %v, want %v", err, errFull)
	}
	if !errors.Is(werr, errFull) {
		t.Fatalf("Write kept accepting 64 MiB after the disk filled: %v", werr)
	}
}
