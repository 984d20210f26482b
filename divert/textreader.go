package divert

import (
	"bytes"
	"io"
	"unicode/utf8"
	"unsafe"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// textReader yields what [modelView.text] would return, the text blocks
// unescaped and joined with newlines, a piece at a time, so that a large
// result passed through is counted without a copy of its text. It needs
// literals of valid UTF-8 (escapes aside): the view's own replacement of
// invalid bytes is made over the whole text, which pieces cannot see.
type textReader struct {
	texts []string // JSON string literals, quotes included
	i     int      // the literal being read
	pos   int      // offset in its inside
	sep   bool     // a newline is due before it
	buf   []byte
	pend  []byte // unescaped, not yet read
}

// textPiece is how much of a literal is unescaped at a time.
const textPiece = 64 << 10

func newTextReader(texts []string) *textReader {
	return &textReader{texts: texts, buf: make([]byte, textPiece+16)}
}

// streamable reports whether texts can be read by a textReader.
func streamable(texts []string) bool {
	for _, t := range texts {
		if !utf8.ValidString(t) {
			return false
		}
	}
	return true
}

func (r *textReader) Read(p []byte) (int, error) {
	for len(r.pend) == 0 {
		if r.i >= len(r.texts) {
			return 0, io.EOF
		}
		if r.sep {
			r.sep = false
			r.pend = append(r.buf[:0], '\n')
			break
		}
		lit := r.texts[r.i]
		in := unsafe.Slice(unsafe.StringData(lit), len(lit))[1 : len(lit)-1]
		if r.pos >= len(in) {
			r.i++
			r.pos = 0
			r.sep = r.i < len(r.texts)
			continue
		}
		cut := escapeSafeCut(in[r.pos:], textPiece)
		n := jsonscan.Unescape(r.buf, in[r.pos:r.pos+cut], cut)
		r.pos += cut
		r.pend = r.buf[:n]
	}
	n := copy(p, r.pend)
	r.pend = r.pend[n:]
	return n, nil
}

// escapeSafeCut is where s (the inside of a string literal) may be cut at
// or before target without splitting an escape (a surrogate pair is one),
// or just past the escape that starts s when it crosses target.
func escapeSafeCut(s []byte, target int) int {
	if target >= len(s) {
		return len(s)
	}
	p := 0
	for {
		k := bytes.IndexByte(s[p:], '\\')
		if k < 0 || p+k >= target {
			return target
		}
		p += k
		n := 2
		if p+1 < len(s) && s[p+1] == 'u' {
			n = 6
			if p+12 <= len(s) && s[p+6] == '\\' && s[p+7] == 'u' && isHighSurrogate(s[p+2:p+6]) {
				n = 12
			}
		}
		if p+n > target {
			if p == 0 {
				return min(n, len(s))
			}
			return p
		}
		p += n
	}
}

// isHighSurrogate reports whether the four hex digits h are D800-DBFF.
func isHighSurrogate(h []byte) bool {
	return (h[0] == 'd' || h[0] == 'D') && (h[1] >= '8' && h[1] <= '9' || h[1] >= 'a' && h[1] <= 'b' || h[1] >= 'A' && h[1] <= 'B')
}
