package tokens

// smallPiece is the longest piece merged with tiktoken's own quadratic loop;
// longer pieces use a heap, which gives the same merges in O(n log n).
const smallPiece = 48

// maxPiece bounds the memory a single piece may take (about 40 bytes of
// scratch per byte, times 3 if ill-formed UTF-8 is replaced). A longer
// piece, a run of over 256 KiB with no space, digit or letter/punctuation
// change, is merged in windows of this size (countHuge), so its count can
// differ from tiktoken's by a few tokens per window; tiktoken itself takes
// quadratic time on such a piece.
const maxPiece = 256 << 10

// scratch holds one goroutine's merge buffers.
type scratch struct {
	parts []part
	h     mergeHeap
	next  []int32
	prev  []int32
	rk    []uint32
	fixed []byte // a piece with ill-formed UTF-8 replaced by U+FFFD
	norm  []byte // a Gemma 3 piece with " " replaced by "▁"
	// gcache is Gemma 3's piece cache, allocated on first use.
	gcache *gemmaCache
	cache  pieceCache
}

type part struct {
	start int
	rank  uint32
}

// countPiece returns the number of tokens BPE splits p into.
func (e *encoding) countPiece(p []byte, s *scratch) int {
	if len(p) <= 1 {
		return len(p)
	}
	if _, ok := e.ranks.get(p); ok {
		return 1
	}
	if len(p) <= smallPiece {
		return e.mergeSmall(p, s)
	}
	return e.mergeLarge(p, s)
}

// mergeSmall is tiktoken's byte_pair_merge: repeatedly merge the leftmost
// adjacent pair with the lowest rank. len(p) >= 2.
func (e *encoding) mergeSmall(p []byte, s *scratch) int {
	parts := s.parts[:0]
	minRank, minAt := rankMax, -1
	for i := 0; i < len(p)-1; i++ {
		r := e.rank(p[i : i+2])
		if r < minRank {
			minRank, minAt = r, i
		}
		parts = append(parts, part{i, r})
	}
	parts = append(parts, part{len(p) - 1, rankMax}, part{len(p), rankMax})
	rankAt := func(i int) uint32 {
		if i+3 < len(parts) {
			return e.rank(p[parts[i].start:parts[i+3].start])
		}
		return rankMax
	}
	for minRank != rankMax {
		i := minAt
		if i > 0 {
			parts[i-1].rank = rankAt(i - 1)
		}
		parts[i].rank = rankAt(i)
		parts = append(parts[:i+1], parts[i+2:]...)
		minRank, minAt = rankMax, -1
		for j := 0; j < len(parts)-1; j++ {
			if parts[j].rank < minRank {
				minRank, minAt = parts[j].rank, j
			}
		}
	}
	s.parts = parts
	return len(parts) - 1
}

// mergeLarge performs the same merges as mergeSmall with a heap keyed by
// (rank, position), so the leftmost lowest pair still goes first. Nodes are
// byte offsets linked into a list; a heap entry is stale when its node was
// merged away or its rank changed (ranks are unique per byte string and a
// node's span only grows, so an equal rank means the same span).
func (e *encoding) mergeLarge(p []byte, s *scratch) int {
	n := len(p)
	if n <= 1 {
		return n
	}
	s.next = grow(s.next, n)
	s.prev = grow(s.prev, n)
	s.rk = grow(s.rk, n)
	next, prev, rk := s.next, s.prev, s.rk
	h := s.h[:0]
	for i := 0; i < n; i++ {
		next[i] = int32(i + 1)
		prev[i] = int32(i - 1)
		rk[i] = rankMax
		if i+2 <= n {
			rk[i] = e.rank(p[i : i+2])
			if rk[i] != rankMax {
				h = append(h, uint64(rk[i])<<32|uint64(i))
			}
		}
	}
	h.init()
	// end returns the end of the pair starting at node i.
	end := func(i int32) int {
		j := next[i]
		if int(j) >= n {
			return -1
		}
		return int(next[j])
	}
	tokens := n
	for len(h) > 0 {
		top := h.pop()
		i, r := int32(uint32(top)), uint32(top>>32)
		if rk[i] != r { // stale (merged-away nodes get rankMax)
			continue
		}
		j := next[i]
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		rk[j] = rankMax
		tokens--
		rk[i] = rankMax
		if e2 := end(i); e2 >= 0 {
			if rk[i] = e.rank(p[i:e2]); rk[i] != rankMax {
				h.push(uint64(rk[i])<<32 | uint64(i))
			}
		}
		if q := prev[i]; q >= 0 {
			rk[q] = rankMax
			if e2 := end(q); e2 >= 0 {
				if rk[q] = e.rank(p[q:e2]); rk[q] != rankMax {
					h.push(uint64(rk[q])<<32 | uint64(q))
				}
			}
		}
	}
	s.h = h
	return tokens
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// mergeHeap is a binary min-heap of rank<<32|position. It is hand-rolled
// rather than container/heap to avoid boxing every entry.
type mergeHeap []uint64

func (h *mergeHeap) init() {
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(v uint64) {
	*h = append(*h, v)
	a := *h
	for i := len(a) - 1; i > 0; {
		parent := (i - 1) / 2
		if a[parent] <= a[i] {
			break
		}
		a[parent], a[i] = a[i], a[parent]
		i = parent
	}
}

func (h *mergeHeap) pop() uint64 {
	a := *h
	v := a[0]
	last := len(a) - 1
	a[0] = a[last]
	*h = a[:last]
	h.down(0)
	return v
}

func (h *mergeHeap) down(i int) {
	a := *h
	for {
		l := 2*i + 1
		if l >= len(a) {
			return
		}
		m := l
		if r := l + 1; r < len(a) && a[r] < a[l] {
			m = r
		}
		if a[i] <= a[m] {
			return
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
}
