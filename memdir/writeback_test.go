package memdir

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteTempStartsWriteback: a temporary file written in small pieces has
// its writeback started a MiB at a time as the bytes come, over contiguous
// ranges that cover every whole MiB written, and holds what was written; the
// system's call itself does nothing harmful on a closed file or a pipe.
func TestWriteTempStartsWriteback(t *testing.T) {
	var ranges [][2]int64
	defer func(f func(*os.File, int64, int64)) { startWriteback = f }(startWriteback)
	real := startWriteback
	startWriteback = func(f *os.File, off, n int64) {
		ranges = append(ranges, [2]int64{off, n})
		real(f, off, n)
	}
	d := At(t.TempDir())
	want := bytes.Repeat([]byte("0123456789abcdef"), (5<<20+512<<10)/16) // 5.5 MiB
	tmp, err := d.WriteTemp("out", func(w io.Writer) error {
		for p := want; len(p) > 0; {
			k := min(len(p), 64<<10+7) // pieces that do not fall on MiB edges
			if _, err := w.Write(p[:k]); err != nil {
				return err
			}
			p = p[k:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(d.Join(tmp))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d as written", len(got), len(want))
	}
	if len(ranges) != 5 {
		t.Fatalf("writeback started over %v, want 5 ranges of a MiB or more", ranges)
	}
	next := int64(0)
	for _, r := range ranges {
		if r[0] != next || r[1] < writebackEvery || r[1] > writebackEvery+64<<10+7 {
			t.Fatalf("writeback started over %v, want contiguous ranges from 0 of a MiB each", ranges)
		}
		next = r[0] + r[1]
	}
	// The call on what is no regular file, or no longer open.
	f, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	if err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	real(f, 0, 1)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	real(w, 0, 1)
}

// BenchmarkWriteSync: 35 MB written a MiB at a time and synced, with and
// without each MiB's writeback started as it is written (what WriteTemp
// does): the sync at the end is what a diverted output's pointer waits for.
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
						startWriteback(f, off, int64(len(chunk)))
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
