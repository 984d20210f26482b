package explore

import (
	"bytes"
	"context"
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

// evaluator evaluates filters and queries on one goroutine; it caches
// regexps built from values in the data.
type evaluator struct {
	d       *doc
	data    []byte
	root    span
	hasRoot bool
	res     map[string]*regexp.Regexp
	// ctx, when set, stops every walk once it is done (checked every
	// 65,536 steps): a query such as count(@..*..*) on a deep item is
	// quadratic in the item, and the call's time bound must still hold.
	ctx     context.Context
	steps   int
	stopped bool
}

func newEvaluator(d *doc) *evaluator {
	e := &evaluator{d: d, data: d.data}
	if d.kind == kindJSON {
		e.root, e.hasRoot = d.root().v, true
	}
	return e
}

// tick counts a step of a walk and reports whether to go on.
func (e *evaluator) tick() bool {
	e.steps++
	if e.steps&0xffff == 0 && e.ctx != nil && e.ctx.Err() != nil {
		e.stopped = true
	}
	return !e.stopped
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
		return false
	}
	lv := e.value(n.l, cur)
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
			if re = e.regexp(rv.str, reRE2); re == nil {
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
	return compareVals(n.cmp, lv, e.value(n.r, cur))
}

// reDialect is how a pattern from the data is compiled: RE2 for the =~
// extension, I-Regexp for search() and match() (anchored).
type reDialect byte

const (
	reRE2 reDialect = iota
	reSearch
	reMatch
)

func (e *evaluator) regexp(pat []byte, how reDialect) *regexp.Regexp {
	key := string(append([]byte{byte(how)}, pat...))
	if re, ok := e.res[key]; ok {
		return re
	}
	var re *regexp.Regexp
	var err error
	if how == reRE2 {
		re, err = regexp.Compile(string(pat))
	} else {
		re, err = compileIRegexp(string(pat), how == reMatch)
	}
	if err != nil {
		re = nil
	}
	if e.res == nil || len(e.res) > 256 {
		e.res = map[string]*regexp.Regexp{}
	}
	e.res[key] = re
	return re
}

// logicalFn is match() or search(): false unless both arguments are
// strings and the pattern is an I-Regexp that matches.
func (e *evaluator) logicalFn(o *operand, cur span) bool {
	v := e.value(o.args[0], cur)
	if v.k != vStr {
		return false
	}
	re := o.re
	if !o.reLit {
		p := e.value(o.args[1], cur)
		if p.k != vStr {
			return false
		}
		how := reSearch
		if o.fn == "match" {
			how = reMatch
		}
		re = e.regexp(p.str, how)
	}
	return re != nil && re.Match(v.str)
}

// value evaluates a comparable to one value (Nothing when a query selects
// no node, or more than one).
func (e *evaluator) value(o *operand, cur span) fval {
	switch o.kind {
	case oLit:
		return o.lit
	case oQuery:
		var v fval
		if o.q.singular {
			s, ok := e.single(o.q, cur)
			if !ok {
				return fval{}
			}
			v = rawVal(e.data[s.start:s.end])
		} else {
			v = e.onlyNode(o.q, cur)
		}
		if v.k == vStr && (o.numText || o.watch != nil) {
			if f, ok := rawTextNumber(v.raw); ok {
				if o.numText {
					return fval{k: vNum, num: f, raw: v.raw}
				}
				o.watch.seen.Add(1)
			}
		}
		return v
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
		a := o.args[0]
		if a.q.singular {
			if s, ok := e.single(a.q, cur); ok {
				return rawVal(e.data[s.start:s.end])
			}
			return fval{}
		}
		return e.onlyNode(a.q, cur)
	}
	return fval{}
}

// onlyNode is the value of the one node q selects; Nothing for none or
// several.
func (e *evaluator) onlyNode(q *fquery, cur span) fval {
	var one span
	n := 0
	e.nodes(q, cur, func(s span) bool { one = s; n++; return n < 2 })
	if n == 1 {
		return rawVal(e.data[one.start:one.end])
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

// virtualRoot is the node of an NDJSON file's root: the array of its
// records, which is nowhere in its bytes.
var virtualRoot = span{-1, -1}

// kindAt is the first byte of the value at v: '{', '[', '"', … ('[' for
// the virtual root).
func (e *evaluator) kindAt(v span) byte {
	if v.start < 0 {
		return '['
	}
	if v.start >= v.end {
		return 0
	}
	return e.data[v.start]
}

// eachChild calls fn with each member of the container at v until fn
// returns false: from the doc's member list for a big container (kept
// from the first scan), else scanned; the records of an NDJSON file for
// the virtual root (its broken records left out).
func (e *evaluator) eachChild(v span, fn func(k, val span) bool) bool {
	if v.start < 0 {
		for i, r := range e.d.records {
			if len(e.d.badRecs) > 0 && e.d.badRecord(i) {
				continue
			}
			if !fn(span{}, r) {
				return false
			}
		}
		return true
	}
	if v.end-v.start >= bigContainer && e.d != nil {
		for _, c := range e.d.members(node{v: v}) {
			if !fn(c.key, c.val) {
				return false
			}
		}
		return true
	}
	return forMembers(e.data, v, fn)
}

// children lists the members of the container at v (kept for a big one).
func (e *evaluator) children(v span) []child {
	if v.start < 0 || v.end-v.start >= bigContainer && e.d != nil {
		var out []child
		if v.start >= 0 {
			return e.d.members(node{v: v})
		}
		e.eachChild(v, func(k, val span) bool { out = append(out, child{k, val}); return true })
		return out
	}
	return scanChildren(e.data, v)
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
	if i < 0 || v.start < 0 || v.end-v.start >= bigContainer && e.d != nil {
		kids := e.children(v)
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

// step applies a name, index or name-or-index selector to the value at v.
func (e *evaluator) step(s *selector, v span) (span, bool) {
	switch c := e.kindAt(v); {
	case c == '{' && (s.kind == selName || s.kind == selNameOrIndex):
		return e.objKey(v, s.name)
	case c == '[' && (s.kind == selIndex || s.kind == selNameOrIndex):
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
		if v, ok = e.step(&q.segs[i].sels[0], v); !ok {
			return span{}, false
		}
	}
	return v, true
}

// nodes calls fn with every node the query selects, in the order RFC 9535
// gives them, until fn returns false.
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
	if !e.tick() {
		return false
	}
	if len(segs) == 0 {
		return fn(v)
	}
	s, rest := &segs[0], segs[1:]
	next := func(c span) bool { return e.walk(rest, c, fn) }
	if !s.desc {
		return e.selectFrom(s, v, next)
	}
	if v.end-v.start >= bigContainer && e.d != nil {
		// A big value's containers from the tape: each byte read once.
		return e.descend(v, func(_ int, x span) bool { return e.selectFrom(s, x, next) })
	}
	return e.visit(v, func(x span) bool { return e.selectFrom(s, x, next) })
}

// visit calls fn with v and each of its descendants, a node before its
// descendants and arrays in order (RFC 9535 §2.5.2.2), until fn returns
// false. It keeps a stack of its own: the data's depth costs memory, not
// Go stack.
func (e *evaluator) visit(v span, fn func(span) bool) bool {
	stack := []span{v}
	var kids []span
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !e.tick() || !fn(x) {
			return false
		}
		if c := e.kindAt(x); c == '{' || c == '[' {
			kids = kids[:0]
			e.eachChild(x, func(_, val span) bool {
				if c := e.data[val.start]; c == '{' || c == '[' {
					kids = append(kids, val)
				}
				return true
			})
			for i := len(kids) - 1; i >= 0; i-- {
				stack = append(stack, kids[i])
			}
		}
	}
	return true
}

// selectFrom applies a segment's selectors, in order, to v.
func (e *evaluator) selectFrom(s *qseg, v span, fn func(span) bool) bool {
	for i := range s.sels {
		if !e.selectOne(&s.sels[i], v, fn) {
			return false
		}
	}
	return true
}

// selectOne applies one selector to v.
func (e *evaluator) selectOne(s *selector, v span, fn func(span) bool) bool {
	switch s.kind {
	case selWild, selFilter:
		if c := e.kindAt(v); c != '{' && c != '[' {
			return true
		}
		return e.eachChild(v, func(_, val span) bool {
			if s.kind == selFilter && !e.test(s.f, val) {
				return true
			}
			return fn(val)
		})
	case selSlice:
		if e.kindAt(v) != '[' {
			return true
		}
		kids := e.children(v)
		return forSlice(s.slice, len(kids), func(i int) bool { return fn(kids[i].val) })
	}
	if c, ok := e.step(s, v); ok {
		return fn(c)
	}
	return true
}

// forSlice calls fn with the indexes a slice selects in an array of n
// elements (RFC 9535 §2.3.4.2.2), in the order it selects them, until fn
// returns false.
func forSlice(s sliceSel, n int, fn func(i int) bool) bool {
	step := s.step
	if step == 0 {
		return true
	}
	norm := func(i int) int {
		if i >= 0 {
			return i
		}
		return n + i
	}
	start, end := 0, n
	if step < 0 {
		start, end = n-1, -n-1
	}
	if s.hasStart {
		start = s.start
	}
	if s.hasEnd {
		end = s.end
	}
	start, end = norm(start), norm(end)
	if step > 0 {
		lo, hi := min(max(start, 0), n), min(max(end, 0), n)
		for i := lo; i < hi; i += step {
			if !fn(i) {
				return false
			}
		}
		return true
	}
	hi, lo := min(max(start, -1), n-1), min(max(end, -1), n-1)
	for i := hi; lo < i; i += step {
		if !fn(i) {
			return false
		}
	}
	return true
}
