//go:build !unix

package main

import "os"

// maxRSS is unknown here: the benchmarks run on Linux.
func maxRSS(*os.ProcessState) (int64, bool) { return 0, false }
