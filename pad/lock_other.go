//go:build !unix

package pad

import (
	"fmt"
	"os"
	"sync"
)

// Without flock the lock only excludes goroutines of this process; pads
// shared by several processes need a unix host.
var processLocks sync.Map // path → *sync.Mutex

type fileLock struct{ mu *sync.Mutex }

func lockFile(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("pad: open lock: %w", err)
	}
	f.Close()
	v, _ := processLocks.LoadOrStore(path, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return &fileLock{mu: mu}, nil
}

func (l *fileLock) unlock() { l.mu.Unlock() }
