package divert

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

// layout is how a JSON output was written, as far as reading it back from
// its pretty-printed file needs to know.
type layout uint8

const (
	layoutOther    layout = iota // anything else: cannot be read back
	layoutIndented               // as stored: two-space indent, ": " (json.MarshalIndent, JSON.stringify(v, null, 2), Python indent=2)
	layoutCompact                // no whitespace between tokens (json.Marshal, JSON.stringify(v))
	layoutSpaced                 // ", " and ": " and no other whitespace (Python's json.dumps(v))
)

// maxEdge is the most whitespace around a JSON output that is kept to read
// it back (Save trims it before pretty-printing).
const maxEdge = 4 << 10

// source says how to read back from the stored file the exact bytes that
// were saved, so that they can be counted after the output is let go.
type source struct {
	ok          bool
	size        int    // bytes saved (not JSON: read that much of the file)
	layout      layout // JSON: the file re-laid out this way
	lead, trail []byte // JSON: whitespace trimmed off around the value
}

// open returns a reader of the bytes that were saved, from the stored
// file (kept readable if it is removed meanwhile: the file is open), or
// false when they cannot be read back.
func (st Stored) open() (io.ReadCloser, bool) {
	s := st.src
	if !s.ok {
		return nil, false
	}
	f, err := os.Open(st.Path)
	if err != nil {
		return nil, false
	}
	if st.Format != FormatJSON {
		return readCloser{io.LimitReader(f, int64(s.size)), f}, true
	}
	var body io.Reader = bufio.NewReaderSize(f, 1<<20)
	switch s.layout {
	case layoutIndented:
		body = io.LimitReader(body, int64(s.size-len(s.lead)-len(s.trail)))
	case layoutCompact, layoutSpaced:
		body = &relayout{r: body.(*bufio.Reader), spaced: s.layout == layoutSpaced}
	}
	return readCloser{io.MultiReader(bytes.NewReader(s.lead), body, bytes.NewReader(s.trail)), f}, true
}

type readCloser struct {
	io.Reader
	io.Closer
}

// relayout reads an indented JSON file back as compact JSON, or with one
// space after each separator: whitespace outside strings is dropped, and
// "spaced" puts one back after ',' and ':'. The file's trailing newline is
// outside the value and is dropped with the rest.
type relayout struct {
	r        *bufio.Reader
	spaced   bool
	inString bool
	escaped  bool
	space    bool // a space is owed (after a separator)
}

func (x *relayout) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if x.space {
			p[n] = ' '
			n++
			x.space = false
			continue
		}
		c, err := x.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		switch {
		case x.inString:
			switch {
			case x.escaped:
				x.escaped = false
			case c == '\\':
				x.escaped = true
			case c == '"':
				x.inString = false
			}
		case c == '"':
			x.inString = true
		case isSpace(c):
			continue
		case x.spaced && (c == ',' || c == ':'):
			x.space = true
		}
		p[n] = c
		n++
	}
	return n, nil
}
