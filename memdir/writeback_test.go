package memdir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStartWritebackKeepsBytes: a file written a MiB at a time with its
// writeback started after each holds what was written; on what is not a
// regular file, or no longer open, it does nothing and does not fail.
func TestStartWritebackKeepsBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	var want []byte
	for i := range 5 {
		chunk[0] = byte('a' + i)
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		StartWriteback(f, int64(len(want)), int64(len(chunk)))
		want = append(want, chunk...)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	StartWriteback(f, 0, 1) // closed
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	StartWriteback(w, 0, 1) // a pipe
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d as written", len(got), len(want))
	}
}

// BenchmarkWriteSync: 35 MB written a MiB at a time and synced, with and
// without each MiB's writeback started as it is written (what Save does):
// the sync at the end is what the pointer waits for.
//
//	go test -run XXX -bench WriteSync -benchtime 10x ./memdir/
func BenchmarkWriteSync(b *testing.B) {
	chunk := make([]byte, 1<<20)
	for _, early := range []bool{false, true} {
		b.Run(map[bool]string{false: "sync", true: "writeback+sync"}[early], func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(35 << 20)
			for b.Loop() {
				f, err := os.Create(filepath.Join(dir, "f"))
				if err != nil {
					b.Fatal(err)
				}
				for off := int64(0); off < 35<<20; off += int64(len(chunk)) {
					if _, err := f.Write(chunk); err != nil {
						b.Fatal(err)
					}
					if early {
						StartWriteback(f, off, int64(len(chunk)))
					}
				}
				if err := f.Sync(); err != nil {
					b.Fatal(err)
				}
				_ = f.Close()
			}
		})
	}
}
