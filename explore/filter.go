package explore

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file parses filter expressions: RFC 9535 JSONPath filters
// (?(@.status.phase == 'Failed' && @.restarts > 3)) plus the =~ regex
// operator and "in [...]" lists that other JSONPath implementations accept.
// The evaluator (eval.go) runs them on raw bytes.

// maxFilterLen and maxFilterDepth bound the work a hostile filter causes;
// the parser recurses on the filter's nesting, never on the data's, and
// runs in time linear in the filter's length. maxFieldLen,
// maxQuerySegments and maxFields do the same for fields (fields, sort_by,
// group_by, distinct): 4,096 bytes, the schema's maxLength (in
// characters); 1,024 segments a path (4,096 bytes hold 2,048 at most;
// stored JSON is nested that deep in a hostile file, not in one a field is
// asked of); 64 fields a list (a row or a group of more is no summary).
const (
	maxFilterLen     = 4096
	maxFilterDepth   = 64
	maxFieldLen      = 4096
	maxQuerySegments = 1024
	maxFields        = 64
)

// filterError is a parse error at a byte offset of the filter text.
type filterError struct {
	src string
	off int
	msg string
}

func (e *filterError) Error() string {
	return fmt.Sprintf("column %d: %s", e.column(), e.msg)
}

// column is the 1-based character column of the error.
func (e *filterError) column() int {
	off := min(max(e.off, 0), len(e.src))
	return utf8.RuneCountInString(e.src[:off]) + 1
}

type fop uint8

const (
	opOr fop = iota
	opAnd
	opNot
	opCmp  // l cmp r
	opTest // existence of a query, or a logical function
)

// fnode is a node of a parsed logical expression.
type fnode struct {
	op   fop
	kids []*fnode
	cmp  string // ==, !=, <, <=, >, >=, =~, in
	l, r *operand
	re   *regexp.Regexp // =~ with a literal pattern
	set  []fval         // in [...]
}

type okind uint8

const (
	oLit okind = iota
	oQuery
	oFunc
)

// operand is a comparable: a literal, a query or a function call.
type operand struct {
	kind okind
	lit  fval
	q    *fquery
	fn   string
	args []*operand
	re   *regexp.Regexp // match()/search() with a literal pattern
}

// logical reports whether the operand yields a logical value (match,
// search), which can be tested but not compared.
func (o *operand) logical() bool { return o.kind == oFunc && (o.fn == "match" || o.fn == "search") }

type qkind uint8

const (
	qKey    qkind = iota // .name, ['name']
	qIndex               // [3], [-1]
	qName                // .3: array index, or the object key "3"
	qWild                // .*, [*]
	qFilter              // [?expr]
)

type qseg struct {
	kind qkind
	desc bool // reached with ..: applies to the node and all its descendants
	key  string
	idx  int
	f    *fnode
}

// fquery is @... (relative to the current item) or $... (the document).
type fquery struct {
	abs      bool
	segs     []qseg
	singular bool
}

// filter is a parsed filter expression.
type filter struct {
	src  string
	root *fnode
}

// parseFilter accepts ?(expr), ?expr, [?expr], $[?expr] and a bare expr.
func parseFilter(src string) (*filter, error) {
	if len(src) > maxFilterLen {
		return nil, &filterError{src: src, off: maxFilterLen, msg: fmt.Sprintf("filter longer than %d bytes", maxFilterLen)}
	}
	lo, hi := 0, len(src)
	for lo < hi && isSpace(src[lo]) {
		lo++
	}
	for hi > lo && isSpace(src[hi-1]) {
		hi--
	}
	s := src[lo:hi]
	switch {
	case strings.HasPrefix(s, "$[?") && strings.HasSuffix(s, "]"):
		lo, hi = lo+3, hi-1
	case strings.HasPrefix(s, "[?") && strings.HasSuffix(s, "]"):
		lo, hi = lo+2, hi-1
	case strings.HasPrefix(s, "?"):
		lo++
	}
	p := &fparser{src: src, pos: lo, end: hi}
	p.ws()
	if p.pos >= p.end {
		return nil, p.errf("empty filter: write a condition such as ?(@.status == 'Failed')")
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos < p.end {
		return nil, p.unexpected("&&, || or the end of the filter")
	}
	return &filter{src: src, root: n}, nil
}

type fparser struct {
	src      string
	pos, end int
	depth    int
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (p *fparser) ws() {
	for p.pos < p.end && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func (p *fparser) errf(format string, a ...any) error {
	return &filterError{src: p.src, off: p.pos, msg: fmt.Sprintf(format, a...)}
}

// unexpected reports what was expected and what is at the cursor.
func (p *fparser) unexpected(want string) error {
	if p.pos >= p.end {
		return p.errf("expected %s, found the end of the filter", want)
	}
	rest := p.src[p.pos:p.end]
	if len(rest) > 12 {
		rest = rest[:12] + "…"
	}
	hint := ""
	switch {
	case strings.HasPrefix(p.src[p.pos:p.end], "=") && !strings.HasPrefix(p.src[p.pos:p.end], "=="):
		hint = " (equality is ==)"
	case hasWord(p.src[p.pos:p.end], "and"), hasWord(p.src[p.pos:p.end], "or"):
		hint = " (use && and ||)"
	}
	return p.errf("expected %s, found %q%s", want, rest, hint)
}

func hasWord(s, w string) bool {
	return strings.HasPrefix(strings.ToLower(s), w) && (len(s) == len(w) || !isIdent(s[len(w)]))
}

func (p *fparser) peek(s string) bool { return strings.HasPrefix(p.src[p.pos:p.end], s) }

func (p *fparser) enter() error {
	p.depth++
	if p.depth > maxFilterDepth {
		return p.errf("filter nested deeper than %d levels", maxFilterDepth)
	}
	return nil
}

func (p *fparser) or() (*fnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	var kids []*fnode
	for {
		n, err := p.and()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		p.ws()
		if !p.peek("||") {
			break
		}
		p.pos += 2
		p.ws()
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &fnode{op: opOr, kids: kids}, nil
}

func (p *fparser) and() (*fnode, error) {
	var kids []*fnode
	for {
		n, err := p.basic()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		p.ws()
		if !p.peek("&&") {
			break
		}
		p.pos += 2
		p.ws()
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &fnode{op: opAnd, kids: kids}, nil
}

func (p *fparser) basic() (*fnode, error) {
	p.ws()
	if p.peek("!") && !p.peek("!=") {
		p.pos++
		if err := p.enter(); err != nil {
			return nil, err
		}
		n, err := p.basic()
		p.depth--
		if err != nil {
			return nil, err
		}
		return &fnode{op: opNot, kids: []*fnode{n}}, nil
	}
	if p.peek("(") {
		p.pos++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		p.ws()
		if !p.peek(")") {
			return nil, p.unexpected("')'")
		}
		p.pos++
		return n, nil
	}
	start := p.pos
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	p.ws()
	op := p.cmpOp()
	if op == "" {
		// A test: a query's existence or a logical function.
		if l.kind == oLit {
			p.pos = start
			if p.pos < p.end && (isIdentStart(p.src[p.pos])) {
				return nil, p.errf("expected a path starting with @ (the current item) or $, found %q; write @.%s", identAt(p.src[p.pos:p.end]), identAt(p.src[p.pos:p.end]))
			}
			return nil, p.unexpected("a comparison operator (==, !=, <, <=, >, >=, =~, in) after the literal")
		}
		if l.kind == oFunc && !l.logical() && l.fn != "value" {
			return nil, p.unexpected(l.fn + "() compared with ==, !=, <, <=, >, >= or =~")
		}
		return &fnode{op: opTest, l: l}, nil
	}
	if l.logical() {
		return nil, &filterError{src: p.src, off: start, msg: l.fn + "() is true or false: use it alone (or with !, && and ||), not in a comparison"}
	}
	p.pos += len(op)
	p.ws()
	n := &fnode{op: opCmp, cmp: op, l: l}
	switch op {
	case "=~":
		rstart := p.pos
		if p.peek("/") {
			re, err := p.regexLit()
			if err != nil {
				return nil, err
			}
			n.re = re
			return n, nil
		}
		r, err := p.operand()
		if err != nil {
			return nil, err
		}
		if r.kind == oLit {
			if r.lit.k != vStr {
				return nil, &filterError{src: p.src, off: rstart, msg: "=~ needs a regular expression: /re/, /re/i or 're'"}
			}
			re, err := regexp.Compile(string(r.lit.str))
			if err != nil {
				return nil, &filterError{src: p.src, off: rstart, msg: "invalid regular expression: " + reErrText(err)}
			}
			n.re = re
		}
		n.r = r
		return n, nil
	case "in":
		if !p.peek("[") {
			return nil, p.unexpected("a list such as ['a', 'b'] after in")
		}
		p.pos++
		for {
			p.ws()
			if p.peek("]") && len(n.set) == 0 {
				break
			}
			v, ok, err := p.literal()
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, p.unexpected("a literal (string, number, true, false or null) in the list")
			}
			n.set = append(n.set, v)
			p.ws()
			if p.peek(",") {
				p.pos++
				continue
			}
			break
		}
		if !p.peek("]") {
			return nil, p.unexpected("',' or ']'")
		}
		p.pos++
		return n, nil
	}
	rstart := p.pos
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	if r.logical() {
		return nil, &filterError{src: p.src, off: rstart, msg: r.fn + "() is true or false: use it alone, not in a comparison"}
	}
	n.r = r
	return n, nil
}

func identAt(s string) string {
	i := 0
	for i < len(s) && (isIdent(s[i]) || s[i] == '.') {
		i++
	}
	return s[:i]
}

func (p *fparser) cmpOp() string {
	for _, op := range []string{"==", "!=", "<=", ">=", "=~", "<", ">"} {
		if p.peek(op) {
			return op
		}
	}
	if p.peek("in") && (p.pos+2 >= p.end || !isIdent(p.src[p.pos+2])) {
		return "in"
	}
	return ""
}

func reErrText(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "error parsing regexp") {
		msg = msg[i+2:]
	}
	return msg
}

// regexLit parses /re/flags (flags: i, m, s).
func (p *fparser) regexLit() (*regexp.Regexp, error) {
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < p.end && p.src[p.pos] != '/' {
		if p.src[p.pos] == '\\' && p.pos+1 < p.end && p.src[p.pos+1] == '/' {
			p.pos++
		} else if p.src[p.pos] == '\\' && p.pos+1 < p.end {
			b.WriteByte('\\')
			p.pos++
		}
		b.WriteByte(p.src[p.pos])
		p.pos++
	}
	if p.pos >= p.end {
		return nil, &filterError{src: p.src, off: start, msg: "unterminated /regex/"}
	}
	p.pos++
	fstart := p.pos
	for p.pos < p.end && strings.IndexByte("ims", p.src[p.pos]) >= 0 {
		p.pos++
	}
	flags := p.src[fstart:p.pos]
	expr := b.String()
	if flags != "" {
		expr = "(?" + flags + ")" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, &filterError{src: p.src, off: start, msg: "invalid regular expression: " + reErrText(err)}
	}
	return re, nil
}

// operand parses a literal, a query or a function call.
func (p *fparser) operand() (*operand, error) {
	p.ws()
	if p.pos >= p.end {
		return nil, p.unexpected("a value, a path (@.field) or a function")
	}
	c := p.src[p.pos]
	if c == '@' || c == '$' {
		q, err := p.query()
		if err != nil {
			return nil, err
		}
		return &operand{kind: oQuery, q: q}, nil
	}
	if v, ok, err := p.literal(); err != nil {
		return nil, err
	} else if ok {
		return &operand{kind: oLit, lit: v}, nil
	}
	if isIdentStart(c) {
		start := p.pos
		name := identAt(p.src[p.pos:p.end])
		if i := strings.IndexByte(name, '.'); i >= 0 {
			name = name[:i]
		}
		q := p.pos + len(name)
		for q < p.end && isSpace(p.src[q]) {
			q++
		}
		if q < p.end && p.src[q] == '(' {
			p.pos = q + 1
			return p.function(name, start)
		}
		return nil, p.errf("expected a path starting with @ (the current item) or $, found %q; write @.%s", identAt(p.src[p.pos:p.end]), identAt(p.src[p.pos:p.end]))
	}
	return nil, p.unexpected("a value, a path (@.field) or a function")
}

var funcArity = map[string]int{"length": 1, "count": 1, "value": 1, "match": 2, "search": 2}

func (p *fparser) function(name string, start int) (*operand, error) {
	ar, ok := funcArity[name]
	if !ok {
		return nil, &filterError{src: p.src, off: start, msg: fmt.Sprintf("unknown function %s(); the functions are length(), count(), value(), match() and search()", name)}
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	o := &operand{kind: oFunc, fn: name}
	for {
		p.ws()
		if p.peek(")") && len(o.args) == 0 {
			break
		}
		astart := p.pos
		a, err := p.operand()
		if err != nil {
			return nil, err
		}
		if a.logical() {
			return nil, &filterError{src: p.src, off: astart, msg: a.fn + "() cannot be an argument"}
		}
		if (name == "count" || name == "value") && a.kind != oQuery {
			return nil, &filterError{src: p.src, off: astart, msg: name + "() takes a path such as @.items[*]"}
		}
		o.args = append(o.args, a)
		p.ws()
		if p.peek(",") {
			p.pos++
			continue
		}
		break
	}
	if !p.peek(")") {
		return nil, p.unexpected("',' or ')'")
	}
	p.pos++
	if len(o.args) != ar {
		return nil, &filterError{src: p.src, off: start, msg: fmt.Sprintf("%s() takes %d argument(s), got %d", name, ar, len(o.args))}
	}
	if (name == "match" || name == "search") && o.args[1].kind == oLit {
		if o.args[1].lit.k != vStr {
			return nil, &filterError{src: p.src, off: start, msg: name + "()'s second argument is a regular expression string"}
		}
		re, err := compileIRegexp(string(o.args[1].lit.str), name == "match")
		if err != nil {
			return nil, &filterError{src: p.src, off: start, msg: "invalid regular expression: " + reErrText(err)}
		}
		o.re = re
	}
	return o, nil
}

// compileIRegexp compiles an RFC 9485-style pattern with Go's RE2; match()
// anchors it at both ends.
func compileIRegexp(pat string, full bool) (*regexp.Regexp, error) {
	if full {
		pat = `\A(?:` + pat + `)\z`
	}
	return regexp.Compile(pat)
}

// literal parses a string, number, true, false or null; ok=false when the
// cursor is not at a literal.
func (p *fparser) literal() (fval, bool, error) {
	if p.pos >= p.end {
		return fval{}, false, nil
	}
	c := p.src[p.pos]
	switch {
	case c == '\'' || c == '"':
		s, err := p.quoted()
		if err != nil {
			return fval{}, false, err
		}
		return fval{k: vStr, str: []byte(s)}, true, nil
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		i := p.pos
		if c == '-' {
			i++
		}
		for i < p.end && (p.src[i] >= '0' && p.src[i] <= '9' || p.src[i] == '.' || p.src[i] == 'e' || p.src[i] == 'E' ||
			(p.src[i] == '+' || p.src[i] == '-') && (p.src[i-1] == 'e' || p.src[i-1] == 'E')) {
			i++
		}
		f, err := strconv.ParseFloat(p.src[start:i], 64)
		if err != nil {
			return fval{}, false, p.errf("invalid number %q", p.src[start:i])
		}
		p.pos = i
		return fval{k: vNum, num: f}, true, nil
	}
	for _, w := range []string{"true", "false", "null"} {
		if p.peek(w) && (p.pos+len(w) >= p.end || !isIdent(p.src[p.pos+len(w)])) {
			p.pos += len(w)
			switch w {
			case "true":
				return fval{k: vBool, b: true}, true, nil
			case "false":
				return fval{k: vBool}, true, nil
			}
			return fval{k: vNull}, true, nil
		}
	}
	return fval{}, false, nil
}

// quoted parses a '...' or "..." string with JSON-style escapes (\' too).
func (p *fparser) quoted() (string, error) {
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
		case c == '\\':
			if p.pos+1 >= p.end {
				return "", &filterError{src: p.src, off: start, msg: "unterminated string"}
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
			case 'u':
				if p.pos+4 > p.end {
					return "", p.errf("invalid \\u escape")
				}
				r, err := strconv.ParseUint(p.src[p.pos:p.pos+4], 16, 32)
				if err != nil {
					return "", p.errf("invalid \\u escape")
				}
				p.pos += 4
				b.WriteRune(rune(r))
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", &filterError{src: p.src, off: start, msg: "unterminated string (missing closing " + string(q) + ")"}
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdent(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' }

// query parses @ or $ followed by at most maxQuerySegments segments.
func (p *fparser) query() (*fquery, error) {
	q := &fquery{abs: p.src[p.pos] == '$', singular: true}
	p.pos++
	for p.pos < p.end {
		if len(q.segs) >= maxQuerySegments {
			return nil, p.errf("more than %d segments in one path", maxQuerySegments)
		}
		desc := false
		switch {
		case p.peek(".."):
			desc = true
			p.pos += 2
			q.singular = false
			if p.peek("[") {
				break
			}
			fallthrough
		case p.peek("."):
			if !desc {
				p.pos++
			}
			if p.peek("*") {
				p.pos++
				q.segs = append(q.segs, qseg{kind: qWild, desc: desc})
				q.singular = false
				continue
			}
			start := p.pos // sliced, not grown a byte at a time: linear in the name
			for p.pos < p.end && isIdent(p.src[p.pos]) {
				p.pos++
			}
			name := p.src[start:p.pos]
			if name == "" {
				return nil, p.unexpected("a field name after '.' (quote odd names: @['a.b'])")
			}
			s := nameSegment(name)
			k := qKey
			if s.kind == segName {
				k = qName
			}
			q.segs = append(q.segs, qseg{kind: k, key: s.key, idx: s.index, desc: desc})
			continue
		}
		if !p.peek("[") {
			if desc {
				return nil, p.unexpected("a name, * or [ after '..'")
			}
			break
		}
		p.pos++
		p.ws()
		seg := qseg{desc: desc}
		switch {
		case p.peek("'") || p.peek(`"`):
			k, err := p.quoted()
			if err != nil {
				return nil, err
			}
			seg.kind, seg.key = qKey, k
		case p.peek("*"):
			p.pos++
			seg.kind = qWild
			q.singular = false
		case p.peek("?"):
			p.pos++
			p.ws()
			n, err := p.or()
			if err != nil {
				return nil, err
			}
			seg.kind, seg.f = qFilter, n
			q.singular = false
		default:
			i := p.pos
			if i < p.end && p.src[i] == '-' {
				i++
			}
			for i < p.end && p.src[i] >= '0' && p.src[i] <= '9' {
				i++
			}
			n, err := strconv.Atoi(p.src[p.pos:i])
			if err != nil {
				return nil, p.unexpected("an index, '*', '?' or a quoted name inside [ ]")
			}
			p.pos = i
			seg.kind, seg.idx = qIndex, n
		}
		p.ws()
		if !p.peek("]") {
			return nil, p.unexpected("']'")
		}
		p.pos++
		if seg.desc {
			q.singular = false
		}
		q.segs = append(q.segs, seg)
		continue
	}
	return q, nil
}

// parseField parses a field path for group_by, distinct and sort_by:
// "status.phase", "spec.containers[*].image", "@.a" or a get_in-style path
// such as items.3.name or $["a.b"].
func parseField(s string) (*fquery, error) {
	if len(s) > maxFieldLen {
		return nil, &filterError{src: s, off: maxFieldLen, msg: fmt.Sprintf("field longer than %d bytes", maxFieldLen)}
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, &filterError{src: s, msg: "empty field"}
	}
	src := t
	switch t[0] {
	case '@', '$':
	case '[':
		src = "@" + t
	default:
		src = "@." + t
	}
	p := &fparser{src: src, end: len(src)}
	q, err := p.query()
	if err == nil && p.pos == p.end {
		q.abs = false
		return q, nil
	}
	// The get_in path syntax (a\.b escapes, .3 indexes) as a fallback.
	if segs, perr := parsePath(t); perr == nil && len(segs) <= maxQuerySegments {
		q := &fquery{singular: true}
		for _, sg := range segs {
			k := qKey
			switch sg.kind {
			case segIndex:
				k = qIndex
			case segName:
				k = qName
			}
			q.segs = append(q.segs, qseg{kind: k, key: sg.key, idx: sg.index})
		}
		return q, nil
	}
	if err == nil {
		err = p.unexpected("'.', '[' or the end of the field")
	}
	fe := err.(*filterError)
	return nil, &filterError{src: s, off: max(0, fe.off-(len(src)-len(t))), msg: fe.msg}
}
