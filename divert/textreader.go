package divert

import (
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
	piece int      // bytes unescaped at a time (at least)
	buf   []byte
	pend  []byte // unescaped, not yet read
}

// textPiece is how much of a literal is unescaped at a time.
const textPiece = 64 << 10

func newTextReader(texts []string) *textReader { return newTextReaderPiece(texts, textPiece) }

// newTextReaderPiece is a textReader unescaping piece bytes at a time (the
// tests cut escapes with small pieces).
func newTextReaderPiece(texts []string, piece int) *textReader {
	return &textReader{texts: texts, piece: piece, buf: make([]byte, piece+16)}
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
		// One pass: the unescaper stops at an escape boundary, so no scan
		// ahead for a cut that splits none (it cost as much as the
		// unescaping on JSON held as text, an escape every few bytes).
		n, used := jsonscan.UnescapeSome(r.buf, in[r.pos:], r.piece)
		r.pos += used
		r.pend = r.buf[:n]
	}
	n := copy(p, r.pend)
	r.pend = r.pend[n:]
	return n, nil
}
