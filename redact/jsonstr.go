package redact

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// JSON string text, read in place. Secrets in a tools/call result sit
// inside JSON strings, written with escapes (\n, \/, \", \u002f); the
// rules are run on the decoded text of a window, and what they match is
// mapped back to raw offsets that begin and end on whole escapes, so a
// mask never cuts one in half.

// escaped reports whether the byte at i (a quote) is escaped: preceded by
// an odd run of backslashes.
func escaped(src []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// quoteBefore is the position of the last unescaped quote in src[lo:i],
// or -1.
func quoteBefore(src []byte, lo, i int) int {
	for i > lo {
		j := bytes.LastIndexByte(src[lo:i], '"')
		if j < 0 {
			return -1
		}
		j += lo
		if !escaped(src, j) {
			return j
		}
		i = j
	}
	return -1
}

// quoteAfter is the position of the first unescaped quote in src[i:hi],
// or -1.
func quoteAfter(src []byte, i, hi int) int {
	for i < hi {
		j := bytes.IndexByte(src[i:hi], '"')
		if j < 0 {
			return -1
		}
		j += i
		if !escaped(src, j) {
			return j
		}
		i = j + 1
	}
	return -1
}

// alignStart moves i forward past the escape it falls inside, if any.
func alignStart(src []byte, i int) int {
	for k := 1; k <= 5 && i-k >= 0; k++ {
		j := i - k
		if src[j] != '\\' {
			continue
		}
		// The closest backslash before i: it begins an escape when its
		// run is odd.
		if !escaped(src, j) {
			n := 2
			if j+1 < len(src) && src[j+1] == 'u' {
				n = 6
			}
			if j+n > i {
				return min(j+n, len(src))
			}
		}
		return i
	}
	return i
}

// decodeWindow appends the decoded text of raw (JSON string content, no
// unescaped quote) to buf and the raw offset of each decoded byte to at,
// plus one final entry: the raw end. Offsets are relative to raw plus
// base. An escape cut by the window's end ends the text before it.
func decodeWindow(buf []byte, at []int32, raw []byte, base int) ([]byte, []int32) {
	i := 0
	for i < len(raw) {
		c := raw[i]
		if c != '\\' {
			// A run without escapes is copied whole.
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				j = len(raw) - i
			}
			for k := 0; k < j; k++ {
				at = append(at, int32(base+i+k))
			}
			buf = append(buf, raw[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(raw) {
			break
		}
		var d byte
		switch raw[i+1] {
		case 'n':
			d = '\n'
		case 't':
			d = '\t'
		case 'r':
			d = '\r'
		case 'b':
			d = '\b'
		case 'f':
			d = '\f'
		case '"', '\\', '/':
			d = raw[i+1]
		case 'u':
			r, n := decodeU(raw[i:])
			if n == 0 {
				return buf, append(at, int32(base+i))
			}
			var tmp [4]byte
			w := utf8.EncodeRune(tmp[:], r)
			for k := 0; k < w; k++ {
				at = append(at, int32(base+i))
			}
			buf = append(buf, tmp[:w]...)
			i += n
			continue
		default: // not JSON: keep the bytes as they are
			d = raw[i+1]
		}
		buf = append(buf, d)
		at = append(at, int32(base+i))
		i += 2
	}
	return buf, append(at, int32(base+i))
}

// decodeU decodes \uXXXX (and a following low surrogate) at the start of
// b; n is 0 when the escape is incomplete.
func decodeU(b []byte) (rune, int) {
	r, ok := hex4(b)
	if !ok {
		return 0, 0
	}
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(b[6:]); ok && len(b) >= 12 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12
			}
		}
		return utf8.RuneError, 6
	}
	return r, 6
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// structural reports whether every byte of b may stand outside a JSON
// string (whitespace, punctuation, numbers, true/false/null): only then is
// a match's place in question.
func structural(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
		case c == ' ', c == '\t', c == '\n', c == '\r', c == '{', c == '}', c == '[', c == ']', c == ',', c == ':', c == '-', c == '+', c == '.':
		case c == 'e', c == 'E', c == 't', c == 'r', c == 'u', c == 'f', c == 'a', c == 'l', c == 's', c == 'n':
		default:
			return false
		}
	}
	return true
}

// strState is where [strState.inString] got to: offsets asked for grow
// along a scan, so each byte is counted once.
type strState struct {
	pos int  // counted up to here
	in  bool // inside a string at pos
}

// inString reports whether offset i of the JSON text src lies inside a
// string, counting unescaped quotes: the slow, exact answer, for the rare
// match that [structural] leaves in doubt.
func (s *strState) inString(src []byte, i int) bool {
	if i < s.pos {
		*s = strState{}
	}
	in, p := s.in, s.pos
	for p < i {
		j := bytes.IndexByte(src[p:i], '"')
		if j < 0 {
			break
		}
		p += j
		if !in || !escaped(src, p) {
			in = !in
		}
		p++
	}
	s.pos, s.in = i, in
	return in
}
