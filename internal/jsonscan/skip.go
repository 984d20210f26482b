package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"runtime"
)

// StringEnd is the offset just past the JSON string starting at b[i] (its
// opening quote), or len(b) if it does not end. It does not validate: it
// is for input already validated, and reads nothing outside b on any
// input. Eight bytes at a time: a word with no quote and no backslash is
// skipped whole, and in one with some, each is found by its bit, so JSON
// held as text (an escaped quote every few bytes) costs a few
// instructions per escape.
//
// A string still open a MiB past its quote, with megabytes of b left (the
// text of a big tool result), is looked for in two halves at once, each on
// a core: the end found in the first half if there is one, else the
// second's.
func StringEnd(b []byte, i int) int {
	j := i + 1
	// Most strings end soon: the first MiB alone first. Nothing else is
	// asked before that (runtime.GOMAXPROCS takes a lock: asked for every
	// short string, it was a third of an indenter's time).
	cut := min(len(b), j+parallelStringFrom)
	e, ok := stringEndIn(b[:cut], j)
	if ok || cut == len(b) {
		return e
	}
	a := resume(b, j, cut)
	if len(b)-j < parallelStringMin || runtime.GOMAXPROCS(0) < 2 {
		e, _ := stringEndIn(b, a)
		return e
	}
	mid := resume(b, a, a+(len(b)-a)/2)
	var (
		eb   int
		okb  bool
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		eb, okb = stringEndIn(b, mid)
	}()
	ea, oka := stringEndIn(b[:mid], a)
	<-done
	switch {
	case oka:
		return ea
	case okb:
		return eb
	}
	return len(b)
}

// The sizes from which [StringEnd] looks in halves: a string open this far
// past its quote, with at least parallelStringMin bytes of input left.
// (Variables for tests.)
var (
	parallelStringFrom = 1 << 20
	parallelStringMin  = 4 << 20
)

// resume is where to go on looking for a string's end at b[at], given that
// b[from] (from <= at) is not escaped: at, or at+1 when an odd run of
// backslashes ends just before at (b[at] is then escaped).
func resume(b []byte, from, at int) int {
	k := at
	for k > from && b[k-1] == '\\' {
		k--
	}
	if (at-k)%2 == 1 {
		return at + 1
	}
	return at
}

// stringEndIn looks for the end of the string whose inside goes on at b[j]
// (not escaped) within b: the offset past its closing quote and true, or
// len(b) and false when b ends first.
func stringEndIn(b []byte, j int) (int, bool) {
	for j+8 <= len(b) {
		m := quoteOrBackslash(binary.LittleEndian.Uint64(b[j:]))
		next := j + 8
		for m != 0 {
			p := j + bits.TrailingZeros64(m)>>3
			if b[p] == '"' {
				return p + 1, true
			}
			// A backslash: the byte after it is escaped.
			if p+2 >= j+8 {
				next = p + 2
				break
			}
			m &= ^uint64(0) << (8 * (p + 2 - j))
		}
		j = next
	}
	for ; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

// IndexQuoteOrBackslash is the index of the first '"' or '\\' in b, or -1.
func IndexQuoteOrBackslash(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '"' || b[i] == '\\' {
			return i
		}
	}
	return -1
}

// quoteOrBackslash has the high bit set of each byte of w that is '"' or
// '\\', and no other bit. (Exact: no carry crosses bytes.)
func quoteOrBackslash(w uint64) uint64 {
	const lo, lo7, hi = 0x0101010101010101, 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	q := w ^ (lo * '"')
	b := w ^ (lo * '\\')
	return ^(((q&lo7)+lo7)|q)&hi | ^(((b&lo7)+lo7)|b)&hi
}
