package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// StringEnd is the offset just past the JSON string starting at b[i] (its
// opening quote), or len(b) if it does not end. It does not validate: it
// is for input already validated, and reads nothing outside b on any
// input. Eight bytes at a time: a word with no quote and no backslash is
// skipped whole, and in one with some, each is found by its bit, so JSON
// held as text (an escaped quote every few bytes) costs a few
// instructions per escape.
func StringEnd(b []byte, i int) int {
	j := i + 1
	for j+8 <= len(b) {
		m := quoteOrBackslash(binary.LittleEndian.Uint64(b[j:]))
		next := j + 8
		for m != 0 {
			p := j + bits.TrailingZeros64(m)>>3
			if b[p] == '"' {
				return p + 1
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
			return j + 1
		}
	}
	return len(b)
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
