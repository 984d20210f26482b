//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSS is a finished process's peak resident set size in KiB (Linux
// reports KiB; the benchmarks run on Linux).
func maxRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return int64(ru.Maxrss), true
}
