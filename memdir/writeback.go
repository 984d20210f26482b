package memdir

import "os"

// StartWriteback asks the system to start writing n bytes of f from off
// to disk now, without waiting for them: a file written a MiB at a time
// and synced at the end ([Dir.WriteTemp]) then finds most of its bytes on
// disk already, so the sync at the end waits for the last ones only
// (about 1 ms instead of 20–40 for 35 MB here) and the rest overlaps with
// what the writer does meanwhile. Where the system has no such call it
// does nothing; an error is ignored (the sync at the end reports what
// matters).
func StartWriteback(f *os.File, off, n int64) {
	if n <= 0 {
		return
	}
	startWriteback(f, off, n)
}
