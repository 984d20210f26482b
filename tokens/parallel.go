package tokens

import (
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
func (e *encoding) count(b []byte, limit int64, workers int) int {
	return countChunked(b, limit, workers, nextCut, e.countSeq)
}

// countChunked counts b in chunks of about chunkSize cut where cut says
// the count of the pieces adds up to the count of the whole, on up to
// workers goroutines when b is large; seq counts one chunk, adding to total and stopping
// early once total reaches limit (when limit > 0). On one core a count
// with a limit still goes chunk by chunk, so it stops early on a single
// huge piece too.
func countChunked(b []byte, limit int64, workers int, cut func(b []byte, at int) int, seq func(b []byte, total *atomic.Int64, limit int64) int) int {
	var total atomic.Int64
	if len(b) < parallelMin || (workers < 2 && limit <= 0) {
		return seq(b, &total, limit)
	}
	next := func(from int) int {
		if from+chunkSize < len(b) {
			return cut(b, from+chunkSize)
		}
		return len(b)
	}
	if workers < 2 {
		for from := 0; from < len(b) && total.Load() < limit; {
			to := next(from)
			seq(b[from:to], &total, limit)
			from = to
		}
		return int(total.Load())
	}
	var (
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
		to := next(from)
		start.Store(int64(to))
		return from, to
	}
	for range workers {
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
				seq(b[from:to], &total, limit)
			}
		}()
	}
	wg.Wait()
	return int(total.Load())
}
