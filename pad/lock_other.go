//go:build !unix

package pad

import (
	"fmt"
	"os"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// Without flock the lock only excludes goroutines of this process; pads
// shared by several processes need a unix host.
var processLocks sync.Map // path → *sync.Mutex

type fileLock struct{ mu *sync.Mutex }

// lockFile locks the sidecar file name in d (created 0600, never through a
// link leading out of memory_dir).
func lockFile(d memdir.Dir, name string) (*fileLock, error) {
	f, err := d.OpenFile(name, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("pad: open lock: %w", err)
	}
	f.Close()
	v, _ := processLocks.LoadOrStore(d.Join(name), &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return &fileLock{mu: mu}, nil
}

func (l *fileLock) unlock() { l.mu.Unlock() }
