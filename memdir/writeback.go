package memdir

import "os"

// writebackEvery is how many bytes written to a temporary file start their
// writeback (a MiB: large enough that the calls cost nothing next to the
// writes, small enough that the final sync has little left).
const writebackEvery = 1 << 20

// writeback is what [Dir.WriteTemp]'s fill writes to: the file, whose bytes
// the system is asked to start writing to disk a MiB at a time as they come,
// without waiting for them (Linux's sync_file_range; nothing elsewhere). A
// file of tens of MB (a diverted output) then finds most of its bytes on
// disk when it is synced, so the sync before its rename waits for the last
// ones only (about 1 ms instead of 20–40 for 35 MB here) and the rest
// overlaps with what fill does meanwhile. An error of the hint is ignored:
// the sync at the end reports what matters.
type writeback struct {
	f         *os.File
	off, from int64 // bytes written; the first whose writeback is not started
}

func (w *writeback) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.off += int64(n)
	if w.off-w.from >= writebackEvery {
		startWriteback(w.f, w.from, w.off-w.from)
		w.from = w.off
	}
	return n, err
}
