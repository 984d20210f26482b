package tokens

import (
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// flushEvery is how many pieces a worker counts between looks at the shared
// total when a limit is set: often enough to stop within a few KiB of text,
// rarely enough that the atomic stays off the profile.
const flushEvery = 128

// countSeq counts b piece by piece on the calling goroutine. With a shared
// total it adds its count to it; with limit > 0 it also returns early once
// the total reaches limit, and the returned count is then partial.
func (e *encoding) countSeq(b []byte, total *atomic.Int64, limit int64) int {
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	valid := utf8.Valid(b)
	n, flushed, pieces := 0, 0, 0
	for i := 0; i < len(b); {
		end := e.split(b, i)
		p := b[i:end]
		i = end
		if !valid && !utf8.Valid(p) {
			s.fixed = appendReplaced(s.fixed[:0], p)
			p = s.fixed
		}
		n += e.countPiece(p, s)
		if limit > 0 {
			if pieces++; pieces == flushEvery {
				pieces = 0
				t := total.Add(int64(n - flushed))
				flushed = n
				if t >= limit {
					return n
				}
			}
		}
	}
	if total != nil {
		total.Add(int64(n - flushed))
	}
	return n
}
