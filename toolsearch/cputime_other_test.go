//go:build !unix

package toolsearch

import "time"

// cpuTime is not measured here; the report then gives 0 CPU time.
func cpuTime() time.Duration { return 0 }
