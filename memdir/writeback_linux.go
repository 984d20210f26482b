package memdir

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts the writeback of n bytes of f from off. (A
// variable for tests.)
var startWriteback = func(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Control, not Fd: Fd would switch the file to blocking mode.
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}
