package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// BurntSushi/toml does not export where a key is, and errors must say
// file:line:col. scanPositions is a small second pass over a document that
// the TOML parser already accepted: it maps every key path — including
// [table] and [[array.table]] headers, dotted keys, quoted keys, inline
// tables and array elements — to where its key and its value start. It is
// lenient by design: on input it does not understand it stops, and lookups
// fall back to the nearest known parent.

// position is a 1-based line and column (in runes).
type position struct {
	Line, Col int
	// Quoted: the key was written as a quoted string, so its text starts
	// one column after Col.
	Quoted bool
}

type positions struct {
	keys   map[string]position // where the key (its last segment) is
	values map[string]position // where the value starts
}

// key returns the position of p's key, or of its nearest known ancestor.
func (ps *positions) key(p keyPath) (position, bool) {
	if ps == nil {
		return position{}, false
	}
	for q := p; len(q) > 0; q = q[:len(q)-1] {
		if pos, ok := ps.keys[q.canon()]; ok {
			return pos, len(q) == len(p)
		}
	}
	return position{}, false
}

// value returns where p's value starts, if known.
func (ps *positions) value(p keyPath) (position, bool) {
	if ps == nil {
		return position{}, false
	}
	pos, ok := ps.values[p.canon()]
	return pos, ok
}

type scanner struct {
	src        string
	i          int
	lineStarts []int
	ps         *positions
	arrays     map[string]int // canon of [[array table]] path → count so far
}

func scanPositions(src string) (ps *positions) {
	s := newScanner(src)
	ps = s.ps
	defer func() {
		// The document already parsed; a scanner bug must cost only
		// precision in messages, never a crash of the loader.
		_ = recover()
	}()
	s.document()
	return ps
}

func newScanner(src string) *scanner {
	s := &scanner{
		src:    src,
		ps:     &positions{keys: map[string]position{}, values: map[string]position{}},
		arrays: map[string]int{},
	}
	s.lineStarts = append(s.lineStarts, 0)
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.lineStarts = append(s.lineStarts, i+1)
		}
	}
	return s
}

func (s *scanner) posAt(off int) position {
	// Binary search for the line containing off.
	lo, hi := 0, len(s.lineStarts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s.lineStarts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	start := s.lineStarts[lo]
	if off > len(s.src) {
		off = len(s.src)
	}
	return position{Line: lo + 1, Col: utf8.RuneCountInString(s.src[start:off]) + 1}
}

func (s *scanner) eof() bool { return s.i >= len(s.src) }
func (s *scanner) peek() byte {
	if s.i < len(s.src) {
		return s.src[s.i]
	}
	return 0
}

// skipSpace skips spaces and tabs; with nl also newlines and comments.
func (s *scanner) skipSpace(nl bool) {
	for !s.eof() {
		switch c := s.src[s.i]; {
		case c == ' ' || c == '\t':
			s.i++
		case nl && (c == '\n' || c == '\r'):
			s.i++
		case nl && c == '#':
			s.skipComment()
		default:
			return
		}
	}
}

func (s *scanner) skipComment() {
	for !s.eof() && s.src[s.i] != '\n' {
		s.i++
	}
}

func (s *scanner) document() {
	var table keyPath
	for {
		s.skipSpace(true)
		if s.eof() {
			return
		}
		if s.peek() == '[' {
			table = s.header()
			continue
		}
		before := s.i
		s.keyValue(table)
		if s.i == before {
			return // not understood: stop rather than loop
		}
	}
}

// header parses [a.b] or [[a.b]] and returns the resolved table path.
func (s *scanner) header() keyPath {
	isArray := strings.HasPrefix(s.src[s.i:], "[[")
	if isArray {
		s.i += 2
	} else {
		s.i++
	}
	s.skipSpace(false)
	keys, offs, quoted := s.keyParts()
	s.skipSpace(false)
	for n := 0; n < 2 && s.peek() == ']'; n++ {
		s.i++
	}
	var p keyPath
	for j, k := range keys {
		p = p.key(k)
		s.record(p, offs[j], quoted[j])
		last := j == len(keys)-1
		c := p.canon()
		if last && isArray {
			n := s.arrays[c]
			s.arrays[c] = n + 1
			p = p.index(n)
			s.record(p, offs[j], quoted[j])
		} else if n, ok := s.arrays[c]; ok && n > 0 {
			p = p.index(n - 1)
		}
	}
	return p
}

// record sets the key position of p unless already known: the first
// mention of a table is where a reader looks for it.
func (s *scanner) record(p keyPath, off int, quoted bool) {
	c := p.canon()
	if _, ok := s.ps.keys[c]; ok {
		return
	}
	pos := s.posAt(off)
	pos.Quoted = quoted
	s.ps.keys[c] = pos
}

// keyParts parses a dotted key: bare, "basic" and 'literal' parts.
func (s *scanner) keyParts() (keys []string, offs []int, quoted []bool) {
	for {
		s.skipSpace(false)
		off := s.i
		var k string
		q := false
		switch s.peek() {
		case '"':
			k, q = s.basicString(), true
		case '\'':
			k, q = s.literalString(), true
		default:
			j := s.i
			for j < len(s.src) && isBareKeyChar(s.src[j]) {
				j++
			}
			k = s.src[s.i:j]
			s.i = j
		}
		if s.i == off {
			return // nothing parsed
		}
		keys, offs, quoted = append(keys, k), append(offs, off), append(quoted, q)
		s.skipSpace(false)
		if s.peek() != '.' {
			return
		}
		s.i++
	}
}

// keyValue parses key = value inside table.
func (s *scanner) keyValue(table keyPath) {
	keys, offs, quoted := s.keyParts()
	if len(keys) == 0 {
		return
	}
	p := table
	for j, k := range keys {
		p = p.key(k)
		s.record(p, offs[j], quoted[j])
	}
	s.skipSpace(false)
	if s.peek() != '=' {
		return
	}
	s.i++
	s.skipSpace(false)
	s.value(p)
}

func (s *scanner) value(p keyPath) {
	if s.eof() {
		return
	}
	c := p.canon()
	if _, ok := s.ps.values[c]; !ok {
		s.ps.values[c] = s.posAt(s.i)
	}
	rest := s.src[s.i:]
	switch {
	case strings.HasPrefix(rest, `"""`):
		s.multiline(`"""`, true)
	case strings.HasPrefix(rest, `'''`):
		s.multiline(`'''`, false)
	case strings.HasPrefix(rest, `"`):
		s.basicString()
	case strings.HasPrefix(rest, `'`):
		s.literalString()
	case strings.HasPrefix(rest, "["):
		s.i++
		for n := 0; ; n++ {
			s.skipSpace(true)
			if s.eof() || s.peek() == ']' {
				break
			}
			before := s.i
			s.value(p.index(n))
			s.skipSpace(true)
			if s.peek() == ',' {
				s.i++
			} else if s.i == before {
				return
			}
		}
		s.i++
	case strings.HasPrefix(rest, "{"):
		s.i++
		for {
			s.skipSpace(true) // TOML 1.1 allows newlines in inline tables
			if s.eof() || s.peek() == '}' {
				break
			}
			before := s.i
			s.keyValue(p)
			s.skipSpace(true)
			if s.peek() == ',' {
				s.i++
			} else if s.i == before {
				return
			}
		}
		s.i++
	default:
		// Scalar (number, bool, date-time: may hold a space).
		for !s.eof() {
			switch s.src[s.i] {
			case ',', ']', '}', '\n', '#', '\r':
				return
			}
			s.i++
		}
	}
}

// basicString consumes "..." and returns its decoded text.
func (s *scanner) basicString() string {
	start := s.i
	s.i++
	for !s.eof() {
		switch s.src[s.i] {
		case '\\':
			s.i = min(s.i+2, len(s.src))
			continue
		case '"':
			s.i++
			raw := s.src[start:s.i]
			if u, err := strconv.Unquote(raw); err == nil {
				return u
			}
			return raw[1 : len(raw)-1]
		case '\n':
			return s.src[start+1 : s.i]
		}
		s.i++
	}
	return s.src[start+1:]
}

// literalString consumes '...' and returns its text.
func (s *scanner) literalString() string {
	start := s.i + 1
	end := strings.IndexAny(s.src[start:], "'\n")
	if end < 0 {
		s.i = len(s.src)
		return s.src[start:]
	}
	s.i = start + end + 1
	return s.src[start : start+end]
}

// multiline consumes a multi-line string (either quote style), including the up to two extra
// quotes TOML allows right before the closing delimiter.
func (s *scanner) multiline(delim string, escapes bool) {
	s.i += 3
	for !s.eof() {
		if escapes && s.src[s.i] == '\\' {
			s.i = min(s.i+2, len(s.src))
			continue
		}
		if strings.HasPrefix(s.src[s.i:], delim) {
			s.i += 3
			for k := 0; k < 2 && s.peek() == delim[0]; k++ {
				s.i++
			}
			return
		}
		s.i++
	}
}
