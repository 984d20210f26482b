//go:build !unix

package explore

import "os"

// mapFile: not offered here; the file is read.
func mapFile(*os.File, int64) ([]byte, bool) { return nil, false }
