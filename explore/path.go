package explore

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A path argument is an RFC 9535 JSONPath query when it starts with $,
// parsed strictly (jsonpath.go): what the RFC refuses is invalid_path, with
// the column. Without the $ it is the dotted shorthand models also write:
// items.3.metadata.name, [0].id, a\.b for a key with a dot, where a
// number after a dot is an index or a key, whichever the value has, and
// bracketed segments ([*], [?…], ['a b'], [1:3]) are the RFC's. The fields
// of iterate_over, sort_by, group_by and distinct are the same shorthand
// relative to an item, or an RFC query from @.

// segKind says how a segment of a singular path may be applied.
type segKind int

const (
	segKey   segKind = iota // ["name"] or .name that is not a number: object key only
	segIndex                // [3]: array index only
	segName                 // .3 in dotted syntax: array index, or the object key "3"
)

// segment is one step of a singular path, as doc.resolve walks it.
type segment struct {
	kind  segKind
	key   string
	index int // for segIndex and numeric segName; negative counts from the end
}

// maxPathLen bounds the work a hostile path can cause.
const maxPathLen = 4096

// parsePath parses a path argument into a query from the root. "" and "."
// are the root.
func parsePath(p string) (*fquery, error) {
	if len(p) > maxPathLen {
		return nil, &syntaxError{src: p, off: maxPathLen, msg: fmt.Sprintf("longer than %d bytes", maxPathLen), kind: ErrBadPath}
	}
	if p == "" || p == "." {
		return &fquery{abs: true, singular: true}, nil
	}
	switch c := p[0]; {
	case c == '$':
		jp := newParser(p, ErrBadPath)
		q, err := jp.query()
		if err != nil {
			return nil, err
		}
		if jp.more() {
			return nil, jp.trailing()
		}
		return q, nil
	case isNameChar(c) || c == '[' || c == '.' || c == '\\' || c == '*':
		q, err := parseShorthand(strings.TrimRight(p, " \t\r\n"), ErrBadPath)
		if q != nil {
			q.abs = true
		}
		return q, err
	}
	return nil, &syntaxError{src: p, msg: "a path starts with $ ($.items[0].name) or a name (items.0.name)", kind: ErrBadPath}
}

// trailing is the error for what is left after a query.
func (p *jparser) trailing() error {
	switch c := p.cur(); {
	case isSpace(c):
		return p.errf("blank space may not end a path")
	case c == '.' && p.pos+1 < p.end && isDigit(p.src[p.pos+1]):
		return p.errf("a name after '.' cannot start with a digit: write [%c] for an index or ['%c'] for a key", p.src[p.pos+1], p.src[p.pos+1])
	}
	return p.unexpected("'.', '[' or the end of the path")
}

// parseShorthand parses the dotted shorthand (relative: the caller sets
// abs).
func parseShorthand(src string, kind error) (*fquery, error) {
	p := newParser(src, kind)
	q := &fquery{singular: true}
	for first := true; p.more(); first = false {
		if len(q.segs) >= maxQuerySegments {
			return nil, p.errf("more than %d segments in one path", maxQuerySegments)
		}
		desc := false
		switch {
		case p.peek("["):
			sels, err := p.bracketed()
			if err != nil {
				return nil, err
			}
			q.add(qseg{sels: sels})
			continue
		case p.peek(".."):
			desc = true
			p.pos += 2
			if p.peek("[") {
				sels, err := p.bracketed()
				if err != nil {
					return nil, err
				}
				q.add(qseg{desc: true, sels: sels})
				continue
			}
		case p.peek("."):
			p.pos++
		case !first:
			return nil, p.unexpected("'.' or '['")
		}
		start := p.pos
		name, err := p.looseName()
		if err != nil {
			return nil, err
		}
		if name == "" {
			if desc {
				return nil, p.unexpected("a name, * or [ after '..'")
			}
			return nil, p.errAt(start, "empty name after '.'")
		}
		q.add(qseg{desc: desc, sels: []selector{shorthandSelector(name, p.src[start:p.pos])}})
	}
	return q, nil
}

// looseName reads a shorthand name: any characters up to '.' or '[', a
// backslash taking the next one as it is.
func (p *jparser) looseName() (string, error) {
	start := p.pos
	var b strings.Builder
	for p.pos < p.end && p.src[p.pos] != '.' && p.src[p.pos] != '[' {
		if p.src[p.pos] == '\\' {
			if p.pos+1 >= p.end {
				return "", p.errf("a backslash must escape a character")
			}
			p.pos++
		}
		b.WriteByte(p.src[p.pos])
		p.pos++
	}
	if p.pos > start && b.Len() == p.pos-start {
		return p.src[start:p.pos], nil // no escapes: a slice, not a copy
	}
	return b.String(), nil
}

// shorthandSelector is the selector of a shorthand name: * is every
// child, an integer an index or a key, anything else a key.
func shorthandSelector(name, raw string) selector {
	if raw == "*" {
		return selector{kind: selWild}
	}
	if raw == name {
		if n, err := strconv.Atoi(name); err == nil && name[0] != '+' && n >= -maxIndex && n <= maxIndex {
			return selector{kind: selNameOrIndex, name: name, idx: n}
		}
	}
	return selector{kind: selName, name: name}
}

// segments is a singular query as doc.resolve walks it.
func segments(q *fquery) []segment {
	out := make([]segment, len(q.segs))
	for i, s := range q.segs {
		sel := s.sels[0]
		switch sel.kind {
		case selIndex:
			out[i] = segment{kind: segIndex, index: sel.idx}
		case selNameOrIndex:
			out[i] = segment{kind: segName, key: sel.name, index: sel.idx}
		default:
			out[i] = segment{kind: segKey, key: sel.name}
		}
	}
	return out
}

// renderIndex and renderKey build the canonical $-form of a resolved path.
func renderIndex(n int) string { return "[" + strconv.Itoa(n) + "]" }

func renderKey(k string) string { return quoteKey(k) }

// pathString renders parsed segments in the canonical $-form.
func pathString(segs []segment) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range segs {
		if s.kind == segIndex {
			b.WriteString(renderIndex(s.index))
		} else {
			b.WriteString(renderKey(s.key))
		}
	}
	return b.String()
}

// quoteKey renders a key as a segment RFC 9535 reads back to it: .name
// when it is a member-name-shorthand, ["…"] otherwise.
func quoteKey(k string) string {
	if isMemberName(k) {
		return "." + k
	}
	return "[" + quoteString(k) + "]"
}

// isMemberName reports whether k may be written after a dot (RFC 9535
// member-name-shorthand: a letter, _ or non-ASCII character, then those or
// digits).
func isMemberName(k string) bool {
	if k == "" {
		return false
	}
	for i, r := range k {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9':
			if i == 0 {
				return false
			}
		case r == utf8.RuneError:
			return false
		case r < utf8.RuneSelf:
			return false
		}
	}
	return true
}

// quoteString is k as a double-quoted string literal of RFC 9535 (JSON's
// escapes; other bytes as they are).
func quoteString(k string) string { return quoted(k, '"') }

// quoted is k between q quotes, with q and \ escaped, \b \f \n \r \t
// and \u00xx for the other control characters: RFC 9535's string
// literal in either quote (a normalized path uses single ones).
func quoted(k string, q byte) string {
	var b strings.Builder
	b.WriteByte(q)
	for i := 0; i < len(k); i++ {
		switch c := k[i]; c {
		case q, '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte(q)
	return b.String()
}

// queryText renders a parsed query: $ or @, then its segments, names as
// quoteKey writes them (a shorthand index-or-key as .3).
func queryText(q *fquery) string {
	var b strings.Builder
	if q.abs {
		b.WriteByte('$')
	} else {
		b.WriteByte('@')
	}
	for _, s := range q.segs {
		if s.desc {
			b.WriteString("..")
		}
		if len(s.sels) == 1 {
			switch sel := s.sels[0]; sel.kind {
			case selName:
				k := quoteKey(sel.name)
				if s.desc && k[0] == '.' {
					k = k[1:]
				}
				b.WriteString(k)
				continue
			case selNameOrIndex:
				if !s.desc {
					b.WriteByte('.')
				}
				b.WriteString(sel.name)
				continue
			case selWild:
				if s.desc {
					b.WriteByte('*')
				} else {
					b.WriteString("[*]")
				}
				continue
			}
		}
		b.WriteByte('[')
		for i, sel := range s.sels {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(selectorText(sel))
		}
		b.WriteByte(']')
	}
	return b.String()
}

// selectorText renders one selector as it is written inside brackets.
func selectorText(sel selector) string {
	switch sel.kind {
	case selName, selNameOrIndex:
		return quoteString(sel.name)
	case selIndex:
		return strconv.Itoa(sel.idx)
	case selWild:
		return "*"
	case selFilter:
		return "?" + sel.fsrc
	}
	s := sel.slice
	var b strings.Builder
	if s.hasStart {
		b.WriteString(strconv.Itoa(s.start))
	}
	b.WriteByte(':')
	if s.hasEnd {
		b.WriteString(strconv.Itoa(s.end))
	}
	if s.step != 1 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(s.step))
	}
	return b.String()
}

// fieldName renders a relative query for footers: status.phase,
// spec.containers[*].image, ["a.b"]; "@" for the item itself.
func fieldName(q *fquery) string {
	t := queryText(&fquery{segs: q.segs})
	switch {
	case t == "@":
		return "@"
	case strings.HasPrefix(t, "@.") && !strings.HasPrefix(t, "@.."):
		return t[2:]
	}
	return t[1:]
}

// parseField parses a field for fields, group_by, distinct and sort_by: a
// query relative to an item, written as the shorthand (status.phase,
// spec.containers[*].image, metadata.labels['app.kubernetes.io/name']) or
// in RFC 9535 from @ (or $, read from the item).
func parseField(s string) (*fquery, error) {
	if len(s) > maxFieldLen {
		return nil, &syntaxError{src: s, off: maxFieldLen, msg: fmt.Sprintf("field longer than %d bytes", maxFieldLen), kind: ErrBadPath}
	}
	lead := len(s) - len(strings.TrimLeft(s, " \t\r\n"))
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, &syntaxError{src: s, msg: "empty field", kind: ErrBadPath}
	}
	var q *fquery
	var err error
	if t[0] == '@' || t[0] == '$' {
		jp := newParser(t, ErrBadPath)
		if q, err = jp.query(); err == nil && jp.more() {
			err = jp.trailing()
		}
		if q != nil {
			q.abs = false
		}
	} else {
		q, err = parseShorthand(t, ErrBadPath)
	}
	if se, ok := err.(*syntaxError); ok {
		return nil, &syntaxError{src: s, off: se.off + lead, msg: se.msg, kind: ErrBadPath}
	}
	return q, err
}
