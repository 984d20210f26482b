//go:build unix

package pad

import (
	"fmt"
	"os"
	"syscall"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// fileLock is an exclusive advisory lock on a sidecar file. flock locks
// belong to the open file description, so two goroutines of one process
// that each open the file exclude each other just as two processes do.
type fileLock struct{ f *os.File }

// lockFile locks the sidecar file name in d (created 0600, never through a
// link leading out of memory_dir).
func lockFile(d memdir.Dir, name string) (*fileLock, error) {
	f, err := d.OpenFile(name, os.O_RDWR|os.O_CREATE)
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
		return nil, fmt.Errorf("pad: flock %s: %w", name, err)
	}
	return &fileLock{f: f}, nil
}

func (l *fileLock) unlock() {
	// Closing the descriptor releases the lock.
	_ = l.f.Close()
}
