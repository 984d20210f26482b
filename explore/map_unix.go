//go:build unix

package explore

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only. The mapping is never undone:
// see [Env.MapFiles] for why that is only right for a process that ends
// with its calls.
func mapFile(f *os.File, size int64) ([]byte, bool) {
	if size <= 0 || int64(int(size)) != size {
		return nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false // a file system that cannot map: read it instead
	}
	return b, true
}
