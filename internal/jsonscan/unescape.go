package jsonscan

import (
	"bytes"
	"runtime"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Unescape writes the value of the inside of a JSON string literal to
// out, stopping once it wrote stop bytes, and returns how many it wrote.
// Escapes are resolved as encoding/json resolves them (a lone surrogate is
// U+FFFD); every other byte is copied as written. The value is never
// longer than the literal, so out may be the literal's own memory (or
// start before it): no byte is written before it is read. out must have
// room for min(stop, len(s)) bytes.
//
// A literal of megabytes unescaped whole (a big tool result's text) is
// unescaped in two halves at once, each on a core, meeting at a [Cut].
func Unescape(out, s []byte, stop int) int {
	if stop >= len(s) && len(s) >= parallelUnescapeMin && len(out) >= len(s) && runtime.GOMAXPROCS(0) > 1 {
		if n, ok := unescapeInHalves(out, s); ok {
			return n
		}
	}
	w, _ := unescape(out, s, stop)
	return min(w, stop)
}

// parallelUnescapeMin is the size of a literal from which [Unescape] works
// in halves: a 24 MB text of JSON is 70 ms of one core. (A variable for
// tests.)
var parallelUnescapeMin = 4 << 20

// unescapeInHalves is Unescape of all of s in two halves at once; false
// when s has no cut in its second half (it is then mostly copied, which
// is quick anyway). The second half is written where neither half's
// reads or writes meet the other's: over its own bytes when out is s's
// own memory (which the caller gave away), else at out[cut:]; then it is
// moved down after the first.
func unescapeInHalves(out, s []byte) (int, bool) {
	cut := Cut(s, len(s)/2)
	if cut < 0 {
		return 0, false
	}
	second := out[cut:]
	o, b := uintptr(unsafe.Pointer(unsafe.SliceData(out))), uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	if o < b+uintptr(len(s)) && b < o+uintptr(len(out)) {
		second = s[cut:]
	}
	var n2 int
	done := make(chan struct{})
	go func() {
		defer close(done)
		n2, _ = unescape(second, s[cut:], len(s)-cut)
	}()
	n1, _ := unescape(out, s[:cut], cut)
	<-done
	return n1 + copy(out[n1:], second[:n2]), true
}

// UnescapeSome is [Unescape] for reading a literal a piece at a time: it
// stops at the first escape boundary once it wrote stop bytes or more
// (an escape, a surrogate pair too, is resolved whole, so the last one
// may take it up to 3 bytes past stop) and returns what it wrote and how
// many bytes of s it read. Unescaping the rest of s from there continues
// the value exactly, so a caller needs no scan of its own for where a
// piece may end. out must have room for min(stop, len(s)) + 3 bytes.
func UnescapeSome(out, s []byte, stop int) (written, read int) {
	return unescape(out, s, stop)
}

// unescape is Unescape's loop: written may pass stop by the last
// escape's bytes; read is where in s it stopped.
func unescape(out, s []byte, stop int) (w, i int) {
	plain := 0 // bytes since the last escape
	for i < len(s) && w < stop {
		if plain >= 16 {
			// A run without escapes (text, logs): moved whole up to the
			// next backslash (copy allows the overlap in place, where out
			// trails s). JSON held as text has an escape every few bytes
			// and stays on the byte loop, which is faster there.
			// (Looked for no further than can be written: a piece of a
			// long literal without escapes must not search all of it.)
			k := min(len(s)-i, stop-w, len(out)-w)
			if e := bytes.IndexByte(s[i:i+k], '\\'); e >= 0 {
				k = e
			}
			w += copy(out[w:w+k], s[i:i+k])
			i += k
			plain = 0
			if i >= len(s) || w >= stop {
				break
			}
		}
		c := s[i]
		if c != '\\' {
			out[w] = c
			w++
			i++
			plain++
			continue
		}
		plain = 0
		if i+1 >= len(s) {
			break
		}
		c = s[i+1]
		i += 2
		switch c {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		case 'u':
			r := hex4(s[i:])
			i = min(i+4, len(s))
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					r2 = utf16.DecodeRune(r, hex4(s[i+2:]))
				}
				if r2 != utf8.RuneError {
					i += 6
				}
				r = r2
			}
			var enc [4]byte
			n := utf8.EncodeRune(enc[:], r)
			w += copy(out[w:], enc[:n])
			continue
		}
		out[w] = c // and " \\ /
		w++
	}
	return w, i
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return utf8.RuneError
	}
	n, err := strconv.ParseUint(string(s[:4]), 16, 32)
	if err != nil {
		return utf8.RuneError
	}
	return rune(n)
}

// Cut is an offset at or after from where the inside of a string literal,
// s, may be cut in two so that [Unescape] of each part, joined, is
// Unescape of s: the start of an escape that is not a \u (so no escape,
// nor a surrogate pair, is split), found after the run of bytes from
// from; or -1 when there is none (then no escape follows from, and s[from:]
// is copied as it is anyway).
func Cut(s []byte, from int) int {
	// Past any backslashes at from, and the byte after: whatever they
	// are part of, the next backslash after a byte that is not one starts
	// an escape.
	i := from
	for i < len(s) && s[i] == '\\' {
		i++
	}
	for i+1 < len(s) {
		k := bytes.IndexByte(s[i+1:], '\\')
		if k < 0 {
			return -1
		}
		p := i + 1 + k
		if p+1 >= len(s) {
			return -1
		}
		if s[p+1] != 'u' {
			return p
		}
		// A \u escape, maybe the low half of a pair: on past it.
		i = p + 5
	}
	return -1
}
