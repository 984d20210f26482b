package explore

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file parses filter expressions, RFC 9535 §2.3.5 (the ?… of a
// filter selector, and the filter argument of get_in, iterate_over and
// count_by): || and &&, !, parentheses, comparisons of literals, singular
// queries and function results, existence tests of any query, and the
// functions length, count, match, search and value, type-checked as the
// RFC's well-typedness rules say. Two extensions other JSONPath
// implementations have too, which no valid RFC 9535 expression can
// contain: a =~ /re/ (RE2, as grep) and a in ['x', 'y']. The evaluator
// (eval.go) runs them on raw bytes.

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

// operand is a comparable or a function argument: a literal, a query or a
// function call.
type operand struct {
	kind okind
	lit  fval
	q    *fquery
	fn   string
	args []*operand
	// re is match()'s or search()'s literal pattern, compiled; reLit says
	// the pattern was a literal (nil re then: not an I-Regexp, which
	// matches nothing, as the RFC says).
	re    *regexp.Regexp
	reLit bool
	// numText is set by the numbers-as-text scan (numtext.go) on a
	// singular query compared with a number, when every value it has in
	// the items is a decimal number written as a string: it reads as that
	// number. watch, on such a query read as the RFC says, counts the
	// numbers as text it compares.
	numText bool
	watch   *numWatch
}

// ftype is a function's declared type (RFC 9535 §2.4.1).
type ftype uint8

const (
	tValue ftype = iota
	tLogical
	tNodes
)

// funcs are the function extensions: their parameter types and result.
var funcs = map[string]struct {
	params []ftype
	result ftype
}{
	"length": {[]ftype{tValue}, tValue},
	"count":  {[]ftype{tNodes}, tValue},
	"value":  {[]ftype{tNodes}, tValue},
	"match":  {[]ftype{tValue, tValue}, tLogical},
	"search": {[]ftype{tValue, tValue}, tLogical},
}

// logical reports whether the operand yields a logical value (match,
// search), which can be tested but not compared.
func (o *operand) logical() bool { return o.kind == oFunc && funcs[o.fn].result == tLogical }

// filter is a parsed filter expression.
type filter struct {
	src  string
	root *fnode
}

// parseFilter accepts ?(expr), ?expr, [?expr], $[?expr] and a bare expr.
func parseFilter(src string) (*filter, error) {
	if len(src) > maxFilterLen {
		return nil, &syntaxError{src: src, off: maxFilterLen, msg: fmt.Sprintf("filter longer than %d bytes", maxFilterLen), kind: ErrBadFilter}
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
	p := &jparser{src: src, pos: lo, end: hi, kind: ErrBadFilter}
	p.ws()
	if !p.more() {
		return nil, p.errf("empty filter: write a condition such as ?(@.status == 'Failed')")
	}
	n, err := p.logicalOr()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.more() {
		return nil, p.unexpected("&&, || or the end of the filter")
	}
	return &filter{src: src, root: n}, nil
}

func (p *jparser) logicalOr() (*fnode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	var kids []*fnode
	for {
		n, err := p.logicalAnd()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		save := p.pos
		p.ws()
		if !p.peek("||") {
			p.pos = save
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

func (p *jparser) logicalAnd() (*fnode, error) {
	var kids []*fnode
	for {
		n, err := p.basic()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		save := p.pos
		p.ws()
		if !p.peek("&&") {
			p.pos = save
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

// basic parses a paren-expr, a comparison or a test, each but a
// comparison possibly after !.
func (p *jparser) basic() (*fnode, error) {
	if p.peek("!") && !p.peek("!=") {
		p.pos++
		p.ws()
		start := p.pos
		var n *fnode
		var err error
		if p.peek("(") {
			n, err = p.paren()
		} else {
			n, err = p.comparisonOrTest()
			if err == nil && n.op != opTest {
				return nil, p.errAt(start, "! applies to a test or to ( … ): write !(%s)", strings.TrimSpace(p.src[start:p.pos]))
			}
		}
		if err != nil {
			return nil, err
		}
		return &fnode{op: opNot, kids: []*fnode{n}}, nil
	}
	if p.peek("(") {
		return p.paren()
	}
	return p.comparisonOrTest()
}

func (p *jparser) paren() (*fnode, error) {
	open := p.pos
	p.pos++
	p.ws()
	n, err := p.logicalOr()
	if err != nil {
		return nil, err
	}
	p.ws()
	if !p.peek(")") {
		if !p.more() {
			return nil, p.errAt(open, "'(' is not closed: expected ')'")
		}
		return nil, p.unexpected("')'")
	}
	p.pos++
	return n, nil
}

// comparisonOrTest parses comparable op comparable, or a test: a query's
// existence or a logical function.
func (p *jparser) comparisonOrTest() (*fnode, error) {
	start := p.pos
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	save := p.pos
	p.ws()
	op := p.cmpOp()
	if op == "" {
		p.pos = save
		switch {
		case l.kind == oLit:
			return nil, p.errAt(start, "a literal must be compared: write @.x == %s, not %s alone", strings.TrimSpace(p.src[start:p.pos]), strings.TrimSpace(p.src[start:p.pos]))
		case l.kind == oFunc && !l.logical():
			return nil, p.errAt(start, "%s() gives a value: compare it (%s(…) > 1), it is not true or false", l.fn, l.fn)
		}
		return &fnode{op: opTest, l: l}, nil
	}
	if err := p.comparable(l, start); err != nil {
		return nil, err
	}
	p.pos += len(op)
	p.ws()
	n := &fnode{op: opCmp, cmp: op, l: l}
	switch op {
	case "=~":
		return p.regexMatch(n)
	case "in":
		return p.inList(n)
	}
	rstart := p.pos
	r, err := p.operand()
	if err != nil {
		return nil, err
	}
	if err := p.comparable(r, rstart); err != nil {
		return nil, err
	}
	n.r = r
	return n, nil
}

// comparable checks that o may be compared: a literal, a singular query
// or a function whose result is a value.
func (p *jparser) comparable(o *operand, at int) error {
	switch {
	case o.kind == oQuery && !o.q.singular:
		return p.errAt(at, "%s selects several nodes and cannot be compared; compare one (@.a[0].b == 1), or test whether any matches: @.a[?@.b == 1]", strings.TrimSpace(p.src[at:p.pos]))
	case o.logical():
		return p.errAt(at, "%s() is true or false: use it alone (or with !, && and ||), not in a comparison", o.fn)
	}
	return nil
}

func (p *jparser) cmpOp() string {
	for _, op := range []string{"==", "!=", "<=", ">=", "=~", "<", ">"} {
		if p.peek(op) {
			return op
		}
	}
	if p.peek("in") && (p.pos+2 >= p.end || !isNameChar(p.src[p.pos+2])) {
		return "in"
	}
	return ""
}

// regexMatch parses the right side of the =~ extension: /re/flags, a
// string or a comparable.
func (p *jparser) regexMatch(n *fnode) (*fnode, error) {
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
	if err := p.comparable(r, rstart); err != nil {
		return nil, err
	}
	if r.kind == oLit {
		if r.lit.k != vStr {
			return nil, p.errAt(rstart, "=~ needs a regular expression: /re/, /re/i or 're'")
		}
		re, err := regexp.Compile(string(r.lit.str))
		if err != nil {
			return nil, p.errAt(rstart, "invalid regular expression: %s", reErrText(err))
		}
		n.re = re
	}
	n.r = r
	return n, nil
}

// inList parses the list of the in extension: [literal, …].
func (p *jparser) inList(n *fnode) (*fnode, error) {
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

func reErrText(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "error parsing regexp") {
		msg = msg[i+2:]
	}
	return msg
}

// regexLit parses /re/flags (flags: i, m, s) for =~.
func (p *jparser) regexLit() (*regexp.Regexp, error) {
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
		return nil, p.errAt(start, "unterminated /regex/")
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
		return nil, p.errAt(start, "invalid regular expression: %s", reErrText(err))
	}
	return re, nil
}

// operand parses a literal, a query or a function call.
func (p *jparser) operand() (*operand, error) {
	if !p.more() {
		return nil, p.unexpected("a value, a path (@.field) or a function")
	}
	c := p.cur()
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
	if isNameChar(c) && c != '-' {
		start := p.pos
		word := p.src[start:p.pos]
		for i := p.pos; i < p.end && (isNameChar(p.src[i]) || p.src[i] == '.'); i++ {
			word = p.src[start : i+1]
		}
		name := word
		if i := strings.IndexByte(name, '.'); i >= 0 {
			name = name[:i]
		}
		if p.pos+len(name) < p.end && p.src[p.pos+len(name)] == '(' {
			p.pos += len(name) + 1
			return p.function(name, start)
		}
		if _, ok := funcs[name]; ok {
			q := p.pos + len(name)
			for q < p.end && isSpace(p.src[q]) {
				q++
			}
			if q < p.end && p.src[q] == '(' {
				return nil, p.errAt(p.pos+len(name), "no space may stand between %s and '('", name)
			}
		}
		switch word {
		case "True", "False", "Null", "TRUE", "FALSE", "NULL", "None":
			return nil, p.errf("%s is not a literal: write true, false or null", word)
		}
		return nil, p.errf("expected a path starting with @ (the current item) or $, found %q; write @.%s", word, word)
	}
	return nil, p.unexpected("a value, a path (@.field) or a function")
}

// function parses the arguments of name( and checks them against its
// declared parameter types.
func (p *jparser) function(name string, start int) (*operand, error) {
	fd, ok := funcs[name]
	if !ok {
		return nil, p.errAt(start, "unknown function %s(); the functions are length(), count(), value(), match() and search()", name)
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
		if err := p.argType(name, len(o.args), fd.params, a, astart); err != nil {
			return nil, err
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
		if op := p.cmpOp(); op != "" || p.peek("&&") || p.peek("||") {
			return nil, p.errf("a function's argument is a value or a path, not a condition")
		}
		return nil, p.unexpected("',' or ')'")
	}
	p.pos++
	if len(o.args) != len(fd.params) {
		return nil, p.errAt(start, "%s() takes %d argument(s), got %d", name, len(fd.params), len(o.args))
	}
	if (name == "match" || name == "search") && o.args[1].kind == oLit {
		o.reLit = true
		if o.args[1].lit.k == vStr {
			o.re, _ = compileIRegexp(string(o.args[1].lit.str), name == "match")
		}
	}
	return o, nil
}

// argType checks argument i of a function against its parameter type
// (RFC 9535 §2.4.3).
func (p *jparser) argType(fn string, i int, params []ftype, a *operand, at int) error {
	if i >= len(params) {
		return p.errAt(at, "%s() takes %d argument(s)", fn, len(params))
	}
	switch params[i] {
	case tNodes:
		if a.kind != oQuery {
			return p.errAt(at, "%s() takes a path such as @.items[*]", fn)
		}
	case tValue:
		switch {
		case a.kind == oQuery && !a.q.singular:
			return p.errAt(at, "%s() takes one value; %s may select several nodes (use a path of names and indexes, such as @.a[0])", fn, strings.TrimSpace(p.src[at:p.pos]))
		case a.logical():
			return p.errAt(at, "%s() cannot be an argument of %s()", a.fn, fn)
		}
	}
	return nil
}

// literal parses a string, number, true, false or null; ok=false when the
// cursor is not at a literal.
func (p *jparser) literal() (fval, bool, error) {
	if !p.more() {
		return fval{}, false, nil
	}
	c := p.cur()
	switch {
	case c == '\'' || c == '"':
		s, err := p.stringLit()
		if err != nil {
			return fval{}, false, err
		}
		return fval{k: vStr, str: []byte(s)}, true, nil
	case c == '-' || isDigit(c):
		f, err := p.number()
		if err != nil {
			return fval{}, false, err
		}
		return fval{k: vNum, num: f}, true, nil
	}
	for _, w := range []string{"true", "false", "null"} {
		if p.peek(w) && (p.pos+len(w) >= p.end || !isNameChar(p.src[p.pos+len(w)])) {
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

// number parses RFC 9535's number: (int / -0) [. digits] [e [+/-] digits].
func (p *jparser) number() (float64, error) {
	start := p.pos
	if p.cur() == '-' {
		p.pos++
	}
	switch {
	case !isDigit(p.cur()):
		return 0, p.errAt(start, "invalid number: a digit must follow -")
	case p.cur() == '0':
		p.pos++
		if isDigit(p.cur()) {
			return 0, p.errAt(start, "invalid number: no leading 0")
		}
	default:
		for isDigit(p.cur()) {
			p.pos++
		}
	}
	if p.cur() == '.' {
		p.pos++
		if !isDigit(p.cur()) {
			return 0, p.errAt(start, "invalid number: digits must follow the decimal point")
		}
		for isDigit(p.cur()) {
			p.pos++
		}
	}
	if c := p.cur(); c == 'e' || c == 'E' {
		p.pos++
		if c := p.cur(); c == '+' || c == '-' {
			p.pos++
		}
		if !isDigit(p.cur()) {
			return 0, p.errAt(start, "invalid number: digits must follow the exponent")
		}
		for isDigit(p.cur()) {
			p.pos++
		}
	}
	f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return 0, p.errAt(start, "invalid number %q", p.src[start:p.pos])
	}
	return f, nil
}
