//go:build unix

package pad

import (
	"fmt"
	"os"
	"syscall"
)

// fileLock is an exclusive advisory lock on a sidecar file. flock locks
// belong to the open file description, so two goroutines of one process
// that each open the file exclude each other just as two processes do.
type fileLock struct{ f *os.File }

func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pad: open lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("pad: flock %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) unlock() {
	// Closing the descriptor releases the lock.
	_ = l.f.Close()
}
