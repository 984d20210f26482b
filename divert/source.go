package divert

import (
	"bytes"
	"io"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// jsonLayout is how a JSON output was written, as far as reading it back from
// its pretty-printed file needs to know.
type jsonLayout uint8

const (
	layoutOther    jsonLayout = iota // anything else: cannot be read back
	layoutIndented                   // as stored: two-space indent, ": " (json.MarshalIndent, JSON.stringify(v, null, 2), Python indent=2)
	layoutCompact                    // no whitespace between tokens (json.Marshal, JSON.stringify(v))
	layoutSpaced                     // ", " and ": " and no other whitespace (Python's json.dumps(v))
)

// maxEdge is the most whitespace around a JSON output that is kept to read
// it back (Save trims it before pretty-printing).
const maxEdge = 4 << 10

// source says how to read back from the stored file the exact bytes that
// were saved, so that they can be counted after the output is let go.
type source struct {
	ok          bool
	size        int        // bytes saved (not JSON: read that much of the file)
	jsonLayout  jsonLayout // JSON: the file re-laid out this way
	lead, trail []byte     // JSON: whitespace trimmed off around the value
}

// open returns a reader of the bytes that were saved, from the stored
// file (kept readable if it is removed meanwhile: the file is open), or
// false when they cannot be read back.
func (st Stored) open() (io.ReadCloser, bool) {
	s := st.src
	if !s.ok {
		return nil, false
	}
	f, err := st.dir.Open(st.Name)
	if err != nil {
		return nil, false
	}
	if st.Format != FormatJSON {
		return readCloser{io.LimitReader(f, int64(s.size)), f}, true
	}
	var body io.Reader
	switch s.jsonLayout {
	case layoutIndented:
		body = io.LimitReader(f, int64(s.size-len(s.lead)-len(s.trail)))
	default:
		body = newRelayout(f, s.jsonLayout == layoutSpaced)
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
// outside the value and is dropped with the rest. Strings, most of the
// bytes, are copied in runs found eight bytes at a time.
type relayout struct {
	r        io.Reader
	spaced   bool
	buf, in  []byte // what was read; in: the part not yet used
	err      error  // the read error after in
	inString bool
	escaped  bool
	space    bool // a space is owed (after a separator)
}

func newRelayout(r io.Reader, spaced bool) *relayout {
	return &relayout{r: r, spaced: spaced, buf: make([]byte, 1<<20)}
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
		if len(x.in) == 0 {
			if x.err != nil {
				break
			}
			m, err := x.r.Read(x.buf)
			x.in, x.err = x.buf[:m], err
			continue
		}
		// No more input than p has room for: each byte read gives at
		// most one written (an owed space waits for the next turn).
		in := x.in[:min(len(x.in), len(p)-n)]
		i := 0
		if x.inString {
			i = x.stringPart(in)
			n += copy(p[n:], in[:i])
		} else {
			for i < len(in) && !x.inString && !x.space {
				c := in[i]
				i++
				switch {
				case isSpace(c):
					continue
				case c == '"':
					x.inString = true
				case x.spaced && (c == ',' || c == ':'):
					x.space = true
				}
				p[n] = c
				n++
			}
		}
		x.in = x.in[i:]
	}
	if n == 0 && x.err != nil {
		return 0, x.err
	}
	return n, nil
}

// stringPart is how much of in belongs to the string being read: up to
// its closing quote (then the string has ended) or all of it.
func (x *relayout) stringPart(in []byte) int {
	i := 0
	for i < len(in) {
		if x.escaped {
			x.escaped = false
			i++
			continue
		}
		k := jsonscan.IndexQuoteOrBackslash(in[i:])
		if k < 0 {
			return len(in)
		}
		i += k
		if in[i] == '\\' {
			x.escaped = true
			i++
			continue
		}
		x.inString = false
		return i + 1
	}
	return i
}
