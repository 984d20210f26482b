package tokens

import "unicode/utf8"

// Gemma 3's BPE, as the reference runs it (transformers.js BPE.bpe, and
// the Hugging Face tokenizers' BPE model): the word starts as its
// characters; repeatedly the adjacent pair with the lowest merge rank is
// merged, the leftmost first among equal ranks (the reference breaks ties
// with a position bias of i/len added to the rank, which never reorders two
// different ranks); a merge exists for a pair when the merges list has it,
// whether or not another split of the same token would do. What is left is
// counted by symbolCount: a token, or byte fallback for a character the
// vocabulary lacks.
//
// Symbols are spans of p, a piece already normalized (" " → "▁").

// mergeGemmaSmall is the quadratic loop, for short pieces.
func (g *gemma) mergeGemmaSmall(p []byte, s *scratch) int {
	parts := s.parts[:0]
	for i := 0; i < len(p); {
		_, w := utf8.DecodeRune(p[i:])
		parts = append(parts, part{i, rankMax})
		i += w
	}
	parts = append(parts, part{len(p), rankMax})
	// parts[i].rank is the rank of merging parts i and i+1.
	rankAt := func(i int) uint32 {
		if i+2 < len(parts) {
			return g.mergeRank(p, parts[i].start, parts[i+1].start, parts[i+2].start)
		}
		return rankMax
	}
	minRank, minAt := rankMax, -1
	for i := 0; i+2 < len(parts); i++ {
		r := rankAt(i)
		parts[i].rank = r
		if r < minRank {
			minRank, minAt = r, i
		}
	}
	for minRank != rankMax {
		i := minAt
		parts = append(parts[:i+1], parts[i+2:]...)
		parts[i].rank = rankAt(i)
		if i > 0 {
			parts[i-1].rank = rankAt(i - 1)
		}
		minRank, minAt = rankMax, -1
		for j := 0; j+1 < len(parts); j++ {
			if parts[j].rank < minRank {
				minRank, minAt = parts[j].rank, j
			}
		}
	}
	s.parts = parts
	n := 0
	for i := 0; i+1 < len(parts); i++ {
		n += g.symbolCount(p[parts[i].start:parts[i+1].start])
	}
	return n
}

// mergeGemmaLarge makes the same merges with a heap keyed by (rank,
// position), for long pieces; the structure is mergeLarge's (bpe.go), with
// symbols starting at character rather than byte boundaries. A heap entry
// is stale when its node's pair rank changed: a rank names one merge, that
// is one token and one left length, so an equal rank means the same pair.
func (g *gemma) mergeGemmaLarge(p []byte, s *scratch) int {
	n := len(p)
	s.next = grow(s.next, n)
	s.prev = grow(s.prev, n)
	s.rk = grow(s.rk, n)
	next, prev, rk := s.next, s.prev, s.rk
	h := s.h[:0]
	last := int32(-1)
	for i := 0; i < n; {
		_, w := utf8.DecodeRune(p[i:])
		next[i] = int32(i + w)
		prev[i] = last
		rk[i] = rankMax
		last = int32(i)
		i += w
	}
	// end returns the end of the pair starting at node i, or -1.
	end := func(i int32) int {
		j := next[i]
		if int(j) >= n {
			return -1
		}
		return int(next[j])
	}
	for i := int32(0); int(i) < n; i = next[i] {
		if e := end(i); e >= 0 {
			if rk[i] = g.mergeRank(p, int(i), int(next[i]), e); rk[i] != rankMax {
				h = append(h, uint64(rk[i])<<32|uint64(i))
			}
		}
	}
	h.init()
	for len(h) > 0 {
		top := h.pop()
		i, r := int32(uint32(top)), uint32(top>>32)
		if rk[i] != r {
			continue
		}
		j := next[i]
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		rk[j] = rankMax
		rk[i] = rankMax
		if e := end(i); e >= 0 {
			if rk[i] = g.mergeRank(p, int(i), int(next[i]), e); rk[i] != rankMax {
				h.push(uint64(rk[i])<<32 | uint64(i))
			}
		}
		if q := prev[i]; q >= 0 {
			rk[q] = rankMax
			if e := end(q); e >= 0 {
				if rk[q] = g.mergeRank(p, int(q), int(i), e); rk[q] != rankMax {
					h.push(uint64(rk[q])<<32 | uint64(q))
				}
			}
		}
	}
	s.h = h
	count := 0
	for i := int32(0); int(i) < n; i = next[i] {
		count += g.symbolCount(p[i:next[i]])
	}
	return count
}
