package tokens

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Texts shorter than parallelMin are counted on the calling goroutine:
// below it, starting goroutines costs more than it saves.
const parallelMin = 256 << 10

// chunkSize is the target size of one unit of parallel work. Small enough
// that an early-stopping check rarely counts far past its limit and that
// workers stay balanced, large enough to amortise the hand-off.
const chunkSize = 64 << 10

// count counts b, in parallel when it is large. With limit > 0 it stops
// once at least limit tokens are counted and returns a partial count that
// is >= limit; otherwise it returns the exact count.
func (e *encoding) count(b []byte, limit int64) int {
	workers := runtime.GOMAXPROCS(0)
	if len(b) < parallelMin || workers < 2 {
		var total atomic.Int64
		return e.countSeq(b, &total, limit)
	}
	var (
		total atomic.Int64
		start atomic.Int64 // offset of the next chunk to claim
		mu    sync.Mutex
		wg    sync.WaitGroup
	)
	// claim hands out the next chunk [from, to), cut at a safe boundary.
	// Cuts are found under a lock because each depends on the previous one;
	// finding one is a short scan.
	claim := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		from := int(start.Load())
		if from >= len(b) {
			return from, from
		}
		to := len(b)
		if from+chunkSize < len(b) {
			to = nextCut(b, from+chunkSize)
		}
		start.Store(int64(to))
		return from, to
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if limit > 0 && total.Load() >= limit {
					return
				}
				from, to := claim()
				if from >= to {
					return
				}
				e.countSeq(b[from:to], &total, limit)
			}
		}()
	}
	wg.Wait()
	return int(total.Load())
}
