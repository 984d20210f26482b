package explore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The evaluator runs a parsed filter on raw JSON bytes: a singular path
// (@.status.phase) is a walk over the item's members, strings without
// escapes are compared as the bytes between their quotes, and integers are
// parsed in place, so the hot path allocates nothing. It never recurses on
// the data's depth: a path walks one level per segment, values are skipped
// with the iterative scanner, and descendant (..) segments use an explicit
// stack.

type vkind uint8

const (
	vNothing vkind = iota // no such node (RFC 9535 "Nothing")
	vNull
	vBool
	vNum
	vStr
	vArr
	vObj
)

// fval is a JSON value during evaluation.
type fval struct {
	k   vkind
	b   bool
	num float64
	str []byte // vStr: the decoded string
	raw []byte // the raw JSON of a value from the document
}

// rawVal interprets a raw JSON value (validated on load).
func rawVal(raw []byte) fval {
	if len(raw) == 0 {
		return fval{}
	}
	switch raw[0] {
	case '"':
		inner := raw[1 : len(raw)-1]
		if bytes.IndexByte(inner, '\\') >= 0 {
			inner = []byte(jsonscan.Unquote(raw))
		}
		return fval{k: vStr, str: inner, raw: raw}
	case 't':
		return fval{k: vBool, b: true, raw: raw}
	case 'f':
		return fval{k: vBool, raw: raw}
	case 'n':
		return fval{k: vNull, raw: raw}
	case '[':
		return fval{k: vArr, raw: raw}
	case '{':
		return fval{k: vObj, raw: raw}
	}
	return fval{k: vNum, num: parseNum(raw), raw: raw}
}

// parseNum parses a JSON number; integers of up to 18 digits without
// allocating or calling strconv.
func parseNum(raw []byte) float64 {
	i, neg := 0, false
	if len(raw) > 0 && raw[0] == '-' {
		i, neg = 1, true
	}
	var n uint64
	j := i
	for ; j < len(raw) && j-i < 18; j++ {
		c := raw[j]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + uint64(c-'0')
	}
	if j == len(raw) && j > i {
		f := float64(n)
		if neg {
			f = -f
		}
		return f
	}
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(raw), len(raw)), 64)
	return f
}

func equalVals(a, b fval) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case vNothing, vNull:
		return true
	case vBool:
		return a.b == b.b
	case vNum:
		return a.num == b.num
	case vStr:
		return bytes.Equal(a.str, b.str)
	}
	var x, y any
	if json.Unmarshal(a.raw, &x) != nil || json.Unmarshal(b.raw, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func lessVals(a, b fval) bool {
	switch {
	case a.k == vNum && b.k == vNum:
		return a.num < b.num
	case a.k == vStr && b.k == vStr:
		return bytes.Compare(a.str, b.str) < 0
	}
	return false
}

// compareVals applies a comparison operator with RFC 9535 semantics: values
// of different types are unequal and unordered; Nothing equals Nothing.
func compareVals(op string, a, b fval) bool {
	switch op {
	case "==":
		return equalVals(a, b)
	case "!=":
		return !equalVals(a, b)
	case "<":
		return lessVals(a, b)
	case "<=":
		return lessVals(a, b) || equalVals(a, b)
	case ">":
		return lessVals(b, a)
	case ">=":
		return lessVals(b, a) || equalVals(a, b)
	}
	return false
}

// evaluator evaluates filters on one goroutine; it caches regexps built
// from values in the data.
type evaluator struct {
	d       *doc
	data    []byte
	root    span
	hasRoot bool
	res     map[string]*regexp.Regexp
}

func newEvaluator(d *doc) *evaluator {
	e := &evaluator{d: d, data: d.data}
	if d.kind == kindJSON {
		e.root, e.hasRoot = d.root().v, true
	}
	return e
}

func (e *evaluator) match(f *filter, item span) bool { return e.test(f.root, item) }

func (e *evaluator) test(n *fnode, cur span) bool {
	switch n.op {
	case opOr:
		for _, k := range n.kids {
			if e.test(k, cur) {
				return true
			}
		}
		return false
	case opAnd:
		for _, k := range n.kids {
			if !e.test(k, cur) {
				return false
			}
		}
		return true
	case opNot:
		return !e.test(n.kids[0], cur)
	case opTest:
		o := n.l
		switch {
		case o.kind == oQuery && o.q.singular:
			_, ok := e.single(o.q, cur)
			return ok
		case o.kind == oQuery:
			found := false
			e.nodes(o.q, cur, func(span) bool { found = true; return false })
			return found
		case o.logical():
			return e.logicalFn(o, cur)
		}
		return e.value(o, cur).k != vNothing
	}
	// opCmp: a non-singular path on either side matches if any of its
	// nodes does (an extension: RFC 9535 allows singular paths only).
	if n.l.kind == oQuery && !n.l.q.singular {
		found, any := false, false
		e.nodes(n.l.q, cur, func(s span) bool {
			any = true
			found = e.cmpOne(n, rawVal(e.data[s.start:s.end]), cur)
			return !found
		})
		if !any {
			return e.cmpOne(n, fval{}, cur)
		}
		return found
	}
	return e.cmpOne(n, e.value(n.l, cur), cur)
}

func (e *evaluator) cmpOne(n *fnode, lv fval, cur span) bool {
	switch n.cmp {
	case "=~":
		if lv.k != vStr {
			return false
		}
		re := n.re
		if re == nil {
			rv := e.value(n.r, cur)
			if rv.k != vStr {
				return false
			}
			if re = e.regexp(rv.str, false); re == nil {
				return false
			}
		}
		return re.Match(lv.str)
	case "in":
		for _, v := range n.set {
			if equalVals(lv, v) {
				return true
			}
		}
		return false
	}
	if n.r.kind == oQuery && !n.r.q.singular {
		found, any := false, false
		e.nodes(n.r.q, cur, func(s span) bool {
			any = true
			found = compareVals(n.cmp, lv, rawVal(e.data[s.start:s.end]))
			return !found
		})
		if !any {
			return compareVals(n.cmp, lv, fval{})
		}
		return found
	}
	return compareVals(n.cmp, lv, e.value(n.r, cur))
}

func (e *evaluator) regexp(pat []byte, full bool) *regexp.Regexp {
	key := string(pat)
	if full {
		key = "\x00" + key
	}
	if re, ok := e.res[key]; ok {
		return re
	}
	re, err := compileIRegexp(string(pat), full)
	if err != nil {
		re = nil
	}
	if e.res == nil || len(e.res) > 256 {
		e.res = map[string]*regexp.Regexp{}
	}
	e.res[key] = re
	return re
}

func (e *evaluator) logicalFn(o *operand, cur span) bool {
	v := e.value(o.args[0], cur)
	if v.k != vStr {
		return false
	}
	re := o.re
	if re == nil {
		p := e.value(o.args[1], cur)
		if p.k != vStr {
			return false
		}
		if re = e.regexp(p.str, o.fn == "match"); re == nil {
			return false
		}
	}
	return re.Match(v.str)
}

// value evaluates a comparable to one value (Nothing when a path selects
// no node, or more than one).
func (e *evaluator) value(o *operand, cur span) fval {
	switch o.kind {
	case oLit:
		return o.lit
	case oQuery:
		if o.q.singular {
			if s, ok := e.single(o.q, cur); ok {
				return rawVal(e.data[s.start:s.end])
			}
			return fval{}
		}
		var one span
		n := 0
		e.nodes(o.q, cur, func(s span) bool { one = s; n++; return n < 2 })
		if n == 1 {
			return rawVal(e.data[one.start:one.end])
		}
		return fval{}
	}
	switch o.fn {
	case "length":
		v := e.value(o.args[0], cur)
		switch v.k {
		case vStr:
			return fval{k: vNum, num: float64(utf8.RuneCount(v.str))}
		case vArr, vObj:
			return fval{k: vNum, num: float64(countMembers(v.raw))}
		}
		return fval{}
	case "count":
		n := 0
		if q := o.args[0].q; q.singular {
			if _, ok := e.single(q, cur); ok {
				n = 1
			}
		} else {
			e.nodes(q, cur, func(span) bool { n++; return true })
		}
		return fval{k: vNum, num: float64(n)}
	case "value":
		return e.value(o.args[0], cur)
	}
	return fval{}
}

// countMembers counts the members of a raw container.
func countMembers(raw []byte) int {
	n := 0
	forMembers(raw, span{0, len(raw)}, func(_, _ span) bool { n++; return true })
	return n
}

// forMembers calls fn with each member of the container at v (for arrays
// the key is the zero span) until fn returns false.
func forMembers(b []byte, v span, fn func(k, val span) bool) bool {
	obj := b[v.start] == '{'
	i := jsonscan.SkipSpace(b, v.start+1)
	for i < v.end {
		var k span
		if obj {
			if b[i] != '"' {
				return true
			}
			ke := jsonscan.StringEnd(b, i)
			k = span{i, ke}
			i = jsonscan.SkipSpace(b, jsonscan.SkipSpace(b, ke)+1)
		} else if b[i] == ']' {
			return true
		}
		ve := jsonscan.ValueEnd(b, i)
		if !fn(k, span{i, ve}) {
			return false
		}
		i = jsonscan.SkipSpace(b, ve)
		if i < v.end && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	return true
}

// keyEq reports whether the raw key (quotes included) decodes to key.
func keyEq(raw []byte, key string) bool {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	return jsonscan.Unquote(raw) == key
}

// objKey returns the value of key in the object at v.
func (e *evaluator) objKey(v span, key string) (span, bool) {
	b := e.data
	if v.end-v.start >= bigContainer && e.d != nil {
		for _, c := range e.d.members(node{v: v}) {
			if keyEq(b[c.key.start:c.key.end], key) {
				return c.val, true
			}
		}
		return span{}, false
	}
	i := jsonscan.SkipSpace(b, v.start+1)
	for i < v.end && b[i] == '"' {
		ke := jsonscan.StringEnd(b, i)
		eq := keyEq(b[i:ke], key)
		i = jsonscan.SkipSpace(b, jsonscan.SkipSpace(b, ke)+1)
		ve := jsonscan.ValueEnd(b, i)
		if eq {
			return span{i, ve}, true
		}
		i = jsonscan.SkipSpace(b, ve)
		if i < v.end && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	return span{}, false
}

// arrIndex returns element i of the array at v; negative i counts from the
// end.
func (e *evaluator) arrIndex(v span, i int) (span, bool) {
	if v.end-v.start >= bigContainer && e.d != nil || i < 0 {
		var kids []child
		if v.end-v.start >= bigContainer && e.d != nil {
			kids = e.d.members(node{v: v})
		} else {
			kids = scanChildren(e.data, v)
		}
		if i < 0 {
			i += len(kids)
		}
		if i < 0 || i >= len(kids) {
			return span{}, false
		}
		return kids[i].val, true
	}
	var out span
	found := false
	n := 0
	forMembers(e.data, v, func(_, val span) bool {
		if n == i {
			out, found = val, true
			return false
		}
		n++
		return true
	})
	return out, found
}

// step applies one key/index/name segment to the value at v.
func (e *evaluator) step(s *qseg, v span) (span, bool) {
	if v.start >= v.end {
		return span{}, false
	}
	switch c := e.data[v.start]; {
	case c == '{' && (s.kind == qKey || s.kind == qName):
		return e.objKey(v, s.key)
	case c == '[' && (s.kind == qIndex || s.kind == qName):
		return e.arrIndex(v, s.idx)
	}
	return span{}, false
}

// single evaluates a singular query.
func (e *evaluator) single(q *fquery, cur span) (span, bool) {
	v := cur
	if q.abs {
		if !e.hasRoot {
			return span{}, false
		}
		v = e.root
	}
	for i := range q.segs {
		var ok bool
		if v, ok = e.step(&q.segs[i], v); !ok {
			return span{}, false
		}
	}
	return v, true
}

// nodes calls fn with every node the query selects, in document order,
// until fn returns false.
func (e *evaluator) nodes(q *fquery, cur span, fn func(span) bool) {
	v := cur
	if q.abs {
		if !e.hasRoot {
			return
		}
		v = e.root
	}
	e.walk(q.segs, v, fn)
}

func (e *evaluator) walk(segs []qseg, v span, fn func(span) bool) bool {
	if len(segs) == 0 {
		return fn(v)
	}
	s, rest := &segs[0], segs[1:]
	next := func(c span) bool { return e.walk(rest, c, fn) }
	if !s.desc {
		return e.selectFrom(s, v, next)
	}
	// v and every descendant, depth first in document order.
	stack := []span{v}
	var kids []span
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !e.selectFrom(s, x, next) {
			return false
		}
		if c := e.data[x.start]; c == '{' || c == '[' {
			kids = kids[:0]
			forMembers(e.data, x, func(_, val span) bool { kids = append(kids, val); return true })
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, kids[i])
			}
		}
	}
	return true
}

// selectFrom applies one segment's selector to v.
func (e *evaluator) selectFrom(s *qseg, v span, fn func(span) bool) bool {
	switch s.kind {
	case qWild, qFilter:
		if c := e.data[v.start]; c != '{' && c != '[' {
			return true
		}
		return forMembers(e.data, v, func(_, val span) bool {
			if s.kind == qFilter && !e.test(s.f, val) {
				return true
			}
			return fn(val)
		})
	}
	if c, ok := e.step(s, v); ok {
		return fn(c)
	}
	return true
}
