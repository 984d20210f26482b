package explore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file holds the parsed form of a JSONPath query and its parser: the
// grammar of RFC 9535 (segments, the name, wildcard, index, slice and
// filter selectors, descendants), strictly for a path that starts with $
// or @. The filter expressions inside [?…] are filter.go's; the dotted
// shorthand without a $ (items.3.name, the fields of iterate_over) is
// path.go's, which hands its bracketed segments to this parser.

// selKind is what a selector selects.
type selKind uint8

const (
	selName        selKind = iota // ['name'], .name: the member of an object
	selIndex                      // [3], [-1]: an element of an array
	selSlice                      // [start:end:step]
	selWild                       // [*], .*: every child
	selFilter                     // [?expr]: the children the expression holds for
	selNameOrIndex                // .3 in the dotted shorthand: element 3, or the member "3"
)

// selector is one selector of a segment.
type selector struct {
	kind  selKind
	name  string
	idx   int // selIndex, selNameOrIndex
	slice sliceSel
	f     *fnode
	fsrc  string // selFilter: the expression's text, for a filter argument split off a path
}

// sliceSel is start:end:step; a missing start or end takes the default
// the RFC gives for the sign of step.
type sliceSel struct {
	start, end, step int
	hasStart, hasEnd bool
}

// singular reports whether the selector selects at most one node.
func (s *selector) singular() bool {
	return s.kind == selName || s.kind == selIndex || s.kind == selNameOrIndex
}

// qseg is one segment: its selectors, applied to each input node, or with
// desc (..) to the input node and each of its descendants.
type qseg struct {
	desc bool
	sels []selector
}

// fquery is a query: @… relative to the current node, $… from the root.
// singular is the RFC's singular query: no descendants, one name or index
// selector a segment.
type fquery struct {
	abs      bool
	segs     []qseg
	singular bool
}

// maxIndex is the largest index magnitude RFC 9535 allows (2^53 - 1): the
// integers I-JSON exchanges exactly.
const maxIndex = 1<<53 - 1

// syntaxError is a parse error at a byte offset of a path, filter or field.
// It wraps what was being parsed: [ErrBadPath] or [ErrBadFilter].
type syntaxError struct {
	src  string
	off  int
	msg  string
	kind error
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("column %d: %s", e.column(), e.msg)
}

func (e *syntaxError) Unwrap() error { return e.kind }

// column is the 1-based character column of the error.
func (e *syntaxError) column() int {
	off := min(max(e.off, 0), len(e.src))
	return utf8.RuneCountInString(e.src[:off]) + 1
}

// jparser parses queries and filter expressions from src[pos:end]. It
// recurses on the nesting of the text (bounded by maxFilterDepth), never
// on the data's, and runs in time linear in the text's length.
type jparser struct {
	src      string
	pos, end int
	depth    int
	kind     error // what errors wrap
}

func newParser(src string, kind error) *jparser {
	return &jparser{src: src, end: len(src), kind: kind}
}

func (p *jparser) errAt(off int, format string, a ...any) error {
	return &syntaxError{src: p.src, off: off, msg: fmt.Sprintf(format, a...), kind: p.kind}
}

func (p *jparser) errf(format string, a ...any) error { return p.errAt(p.pos, format, a...) }

// unexpected reports what was expected and what is at the cursor.
func (p *jparser) unexpected(want string) error {
	if p.pos >= p.end {
		return p.errf("expected %s, found the end", want)
	}
	rest := p.src[p.pos:p.end]
	if len(rest) > 12 {
		rest = rest[:12] + "…"
	}
	hint := ""
	at := p.src[p.pos:p.end]
	switch {
	case strings.HasPrefix(at, "=") && !strings.HasPrefix(at, "=="):
		hint = " (equality is ==)"
	case hasWord(at, "and"), hasWord(at, "or"):
		hint = " (use && and ||)"
	case at[0] == '-' && p.pos > 0 && isNameChar(p.src[p.pos-1]):
		hint = " (a name with - needs quotes: ['app-name'])"
	}
	return p.errf("expected %s, found %q%s", want, rest, hint)
}

func hasWord(s, w string) bool {
	return strings.HasPrefix(strings.ToLower(s), w) && (len(s) == len(w) || !isNameChar(s[len(w)]))
}

func (p *jparser) peek(s string) bool { return strings.HasPrefix(p.src[p.pos:p.end], s) }

func (p *jparser) more() bool { return p.pos < p.end }

func (p *jparser) cur() byte {
	if p.pos < p.end {
		return p.src[p.pos]
	}
	return 0
}

// ws skips RFC 9535 blank space: space, tab, line feed, carriage return.
func (p *jparser) ws() {
	for p.pos < p.end && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNameChar is a byte of an unquoted name as the shorthand and the error
// hints read it: ASCII letters, digits, _ and -, and any non-ASCII byte.
func isNameChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c >= 0x80
}

func (p *jparser) enter() error {
	p.depth++
	if p.depth > maxFilterDepth {
		return p.errf("nested deeper than %d levels", maxFilterDepth)
	}
	return nil
}

// query parses a query at '$' or '@' followed by its segments
// (segments = *(S segment): blank space may stand between them, but not
// after the last, which the caller sees).
func (p *jparser) query() (*fquery, error) {
	q := &fquery{abs: p.src[p.pos] == '$', singular: true}
	p.pos++
	for {
		save := p.pos
		p.ws()
		if c := p.cur(); c != '.' && c != '[' {
			p.pos = save
			return q, nil
		}
		if len(q.segs) >= maxQuerySegments {
			return nil, p.errf("more than %d segments in one path", maxQuerySegments)
		}
		seg, err := p.segment()
		if err != nil {
			return nil, err
		}
		q.add(seg)
	}
}

// add appends a segment, keeping singular up to date.
func (q *fquery) add(seg qseg) {
	if seg.desc || len(seg.sels) != 1 || !seg.sels[0].singular() {
		q.singular = false
	}
	q.segs = append(q.segs, seg)
}

// segment parses .name, .*, ..name, ..*, ..[…] or […] at the cursor.
func (p *jparser) segment() (qseg, error) {
	if p.peek("..") {
		p.pos += 2
		switch {
		case p.peek("["):
			sels, err := p.bracketed()
			return qseg{desc: true, sels: sels}, err
		case p.peek("*"):
			p.pos++
			return qseg{desc: true, sels: []selector{{kind: selWild}}}, nil
		}
		name, ok := p.memberName()
		if !ok {
			return qseg{}, p.unexpected("a name, * or [ right after '..'")
		}
		return qseg{desc: true, sels: []selector{{kind: selName, name: name}}}, nil
	}
	if p.peek(".") {
		p.pos++
		if p.peek("*") {
			p.pos++
			return qseg{sels: []selector{{kind: selWild}}}, nil
		}
		name, ok := p.memberName()
		if !ok {
			return qseg{}, p.unexpected("a name or * right after '.' (quote other names: ['1'], ['a b'])")
		}
		return qseg{sels: []selector{{kind: selName, name: name}}}, nil
	}
	sels, err := p.bracketed()
	return qseg{sels: sels}, err
}

// memberName reads RFC 9535's member-name-shorthand: a letter, _ or
// non-ASCII character, then those or digits.
func (p *jparser) memberName() (string, bool) {
	start := p.pos
	for p.pos < p.end {
		c := p.src[p.pos]
		if c < utf8.RuneSelf {
			if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) && p.pos > start {
				p.pos++
				continue
			}
			break
		}
		r, n := utf8.DecodeRuneInString(p.src[p.pos:p.end])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		p.pos += n
	}
	return p.src[start:p.pos], p.pos > start
}

// bracketed parses [selector *(, selector)] at '['.
func (p *jparser) bracketed() ([]selector, error) {
	open := p.pos
	p.pos++
	var sels []selector
	for {
		p.ws()
		s, err := p.selector()
		if err != nil {
			return nil, err
		}
		sels = append(sels, s)
		p.ws()
		switch {
		case p.peek(","):
			p.pos++
		case p.peek("]"):
			p.pos++
			return sels, nil
		case !p.more():
			return nil, p.errAt(open, "'[' is not closed")
		default:
			return nil, p.unexpected("',' or ']'")
		}
	}
}

// selector parses one selector inside brackets.
func (p *jparser) selector() (selector, error) {
	switch c := p.cur(); {
	case c == '\'' || c == '"':
		s, err := p.stringLit()
		return selector{kind: selName, name: s}, err
	case c == '*':
		p.pos++
		return selector{kind: selWild}, nil
	case c == '?':
		p.pos++
		p.ws()
		start := p.pos
		f, err := p.logicalOr()
		if err != nil {
			return selector{}, err
		}
		return selector{kind: selFilter, f: f, fsrc: p.src[start:p.pos]}, nil
	case c == ':' || c == '-' || isDigit(c):
		return p.indexOrSlice()
	case c == '@' || c == '$':
		return selector{}, p.errf("a path inside [ ] is a filter: write [?%c…]", c)
	}
	return selector{}, p.unexpected("a quoted name, an index, a slice, * or a ?filter inside [ ]")
}

// indexOrSlice parses an index (3, -1) or a slice (start:end:step, each
// part optional).
func (p *jparser) indexOrSlice() (selector, error) {
	var first int
	hasFirst := false
	if p.cur() != ':' {
		n, err := p.intLit()
		if err != nil {
			return selector{}, err
		}
		first, hasFirst = n, true
		save := p.pos
		p.ws()
		if !p.peek(":") {
			p.pos = save
			return selector{kind: selIndex, idx: first}, nil
		}
	}
	p.pos++ // ':'
	s := sliceSel{start: first, hasStart: hasFirst, step: 1}
	p.ws()
	if c := p.cur(); c == '-' || isDigit(c) {
		n, err := p.intLit()
		if err != nil {
			return selector{}, err
		}
		s.end, s.hasEnd = n, true
		p.ws()
	}
	if p.peek(":") {
		p.pos++
		p.ws()
		if c := p.cur(); c == '-' || isDigit(c) {
			n, err := p.intLit()
			if err != nil {
				return selector{}, err
			}
			s.step = n
		}
	}
	return selector{kind: selSlice, slice: s}, nil
}

// intLit parses RFC 9535's int: 0, or an optional - and digits without a
// leading 0, at most 2^53 - 1 from zero.
func (p *jparser) intLit() (int, error) {
	start := p.pos
	neg := p.cur() == '-'
	if neg {
		p.pos++
	}
	if !isDigit(p.cur()) {
		return 0, p.unexpected("a digit")
	}
	if p.cur() == '0' {
		p.pos++
		switch {
		case neg:
			return 0, p.errAt(start, "-0 is not an integer here; write 0")
		case isDigit(p.cur()):
			return 0, p.errAt(start, "an integer has no leading 0")
		}
		return 0, nil
	}
	var n uint64
	for isDigit(p.cur()) {
		if n = n*10 + uint64(p.cur()-'0'); n > maxIndex {
			for isDigit(p.cur()) {
				p.pos++
			}
			return 0, p.errAt(start, "%s is out of range: indexes and slice bounds are at most 2^53-1 from zero", p.src[start:p.pos])
		}
		p.pos++
	}
	if neg {
		return -int(n), nil
	}
	return int(n), nil
}

// stringLit parses a '…' or "…" string literal with RFC 9535's escapes
// (JSON's, and \' in single quotes), returning its value.
func (p *jparser) stringLit() (string, error) {
	start := p.pos
	q := p.src[p.pos]
	p.pos++
	var b strings.Builder
	for p.pos < p.end {
		c := p.src[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.errf("a control character (U+%04X) inside quotes must be escaped", c)
		case c == '\\':
			if err := p.escape(&b, q); err != nil {
				return "", err
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", p.errAt(start, "unterminated string (missing closing %c)", q)
}

// escape decodes the escape at the cursor (a backslash) into b.
func (p *jparser) escape(b *strings.Builder, quote byte) error {
	at := p.pos
	if p.pos+1 >= p.end {
		return p.errAt(at, "incomplete escape at the end")
	}
	e := p.src[p.pos+1]
	p.pos += 2
	switch e {
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case '/', '\\':
		b.WriteByte(e)
	case '\'', '"':
		if e != quote {
			return p.errAt(at, "\\%c is not an escape inside %c quotes; write %c alone", e, quote, e)
		}
		b.WriteByte(e)
	case 'u':
		r, err := p.hex4(at)
		if err != nil {
			return err
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return p.errAt(at, "a low surrogate \\u%04X without a high one before it", r)
		case r >= 0xD800 && r <= 0xDBFF:
			if !p.peek(`\u`) {
				return p.errAt(at, "a high surrogate \\u%04X must be followed by a low one (\\uDC00-\\uDFFF)", r)
			}
			p.pos += 2
			lo, err := p.hex4(at)
			if err != nil {
				return err
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return p.errAt(at, "a high surrogate \\u%04X must be followed by a low one (\\uDC00-\\uDFFF)", r)
			}
			r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
		}
		b.WriteRune(r)
	default:
		hint := ""
		if strings.IndexByte(`.*+?()[]{}|^$dDwWsS`, e) >= 0 {
			hint = fmt.Sprintf("; a regular expression's backslash is doubled inside quotes: '\\\\%c' (or [%c] for a character)", e, e)
		}
		return p.errAt(at, "\\%c is not an escape: the escapes are \\b \\f \\n \\r \\t \\/ \\\\ \\uXXXX and the quote%s", e, hint)
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape.
func (p *jparser) hex4(at int) (rune, error) {
	if p.pos+4 > p.end {
		return 0, p.errAt(at, "\\u needs four hex digits")
	}
	var r rune
	for _, c := range []byte(p.src[p.pos : p.pos+4]) {
		var d byte
		switch {
		case isDigit(c):
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.errAt(at, "\\u needs four hex digits")
		}
		r = r<<4 | rune(d)
	}
	p.pos += 4
	return r, nil
}
