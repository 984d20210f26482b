package tokens

import (
	"sync/atomic"
	"unicode/utf8"
)

// pieceCache remembers the counts of recent short pieces. Tool outputs are
// repetitive (JSON keys, log prefixes, indentation), and a hit in this small,
// cache-resident table replaces a lookup in the multi-megabyte rank table and
// any merging.
type pieceCache [cacheSize]cacheEntry

const (
	cacheSize   = 4096
	cacheKeyMax = 22
)

type cacheEntry struct {
	n     uint8 // key length; 0 marks an empty entry (pieces are never empty)
	count uint8
	key   [cacheKeyMax]byte
}

// flushEvery is how many pieces a worker counts between looks at the shared
// total when a limit is set: often enough to stop within a few KiB of text,
// rarely enough that the atomic stays off the profile.
const flushEvery = 128

// countSeq counts b piece by piece on the calling goroutine. With a shared
// total it adds its count to it; with limit > 0 it also returns early once
// the total reaches limit, and the returned count is then partial.
func (e *encoding) countSeq(b []byte, total *atomic.Int64, limit int64) int {
	s := e.scratch.Get().(*scratch)
	defer e.scratch.Put(s)
	valid := utf8.Valid(b)
	n, flushed, pieces := 0, 0, 0
	for i := 0; i < len(b); {
		end := e.split(b, i)
		p := b[i:end]
		i = end
		if len(p) > maxPiece {
			n += e.countHuge(p, valid, s)
		} else {
			if !valid && !utf8.Valid(p) {
				s.fixed = appendReplaced(s.fixed[:0], p)
				p = s.fixed
			}
			n += e.countCached(p, s)
		}
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

// countCached counts one piece through the per-worker piece cache.
func (e *encoding) countCached(p []byte, s *scratch) int {
	if len(p) > cacheKeyMax {
		return e.countPiece(p, s)
	}
	ce := &s.cache[hashBytes(p)&(cacheSize-1)]
	if int(ce.n) == len(p) && string(ce.key[:len(p)]) == string(p) {
		return int(ce.count)
	}
	c := e.countPiece(p, s)
	ce.n, ce.count = uint8(len(p)), uint8(c)
	copy(ce.key[:], p)
	return c
}

// countHuge counts a piece longer than maxPiece in windows of maxPiece
// bytes, which keeps the scratch memory bounded whatever the input (see
// maxPiece for what this costs in exactness). Windows end before a byte
// that starts a rune or an ill-formed sequence, so none is cut in two.
func (e *encoding) countHuge(p []byte, valid bool, s *scratch) int {
	n := 0
	for len(p) > 0 {
		cut := min(maxPiece, len(p))
		for cut < len(p) && cut > maxPiece-4 && p[cut]&0xC0 == 0x80 {
			cut--
		}
		w := p[:cut]
		p = p[cut:]
		if !valid && !utf8.Valid(w) {
			s.fixed = appendReplaced(s.fixed[:0], w)
			w = s.fixed
		}
		n += e.countPiece(w, s)
	}
	return n
}
