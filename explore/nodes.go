package explore

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"
)

// A path that is not singular ($.items[*].name, $..children[?@.size >
// 1000], $.a['b','c'], $[-3:]) selects a node list, RFC 9535's result: its
// nodes in the order the RFC gives, a node as many times as the path
// reaches it. get_in answers their values, and iterate_over, count_by and
// item_schema take them as their items. The path is evaluated segment by
// segment over the raw bytes: a segment of one wildcard or filter selector
// (the ones that fan out: [*], ..*, [?…], ..[?…]) lists the children of
// its input nodes first, then keeps the ones the filter holds for on every
// core, with its numbers as text found first (numtext.go); other segments
// are applied node by node.

// maxNodes bounds a node list (16 bytes a node): $..*..* lists every node
// once for each of its ancestors, which no file needs to answer.
const maxNodes = 8 << 20

// errTooManyNodes is a path whose node list passes maxNodes.
var errTooManyNodes = errors.New("the path selects more than " + Comma(maxNodes) + " nodes")

// selectPath evaluates q from d's root (an NDJSON file's records for $):
// the nodes, and what a footer says about numbers as text in its filters.
func (d *doc) selectPath(ctx context.Context, q *fquery) ([]span, []numNote, error) {
	e := newEvaluator(d)
	e.ctx = ctx
	root := d.root().v
	if d.kind == kindNDJSON {
		root = virtualRoot
	}
	cur := []span{root}
	var notes []numNote
	for si := range q.segs {
		seg := &q.segs[si]
		var next []span
		if len(seg.sels) == 1 && (seg.sels[0].kind == selWild || seg.sels[0].kind == selFilter) {
			var err error
			if next, err = e.childrenOf(cur, seg.desc); err != nil {
				return nil, nil, err
			}
			if seg.sels[0].kind == selFilter {
				if next, err = d.keep(ctx, next, seg.sels[0].f, &notes); err != nil {
					return nil, nil, err
				}
			}
		} else {
			over := false
			emit := func(c span) bool {
				next = append(next, c)
				over = len(next) > maxNodes
				return !over
			}
			for _, v := range cur {
				if seg.desc {
					e.descend(v, func(_ int, x span) bool { return e.selectFrom(seg, x, emit) })
				} else {
					e.selectFrom(seg, v, emit)
				}
				if over {
					return nil, nil, errTooManyNodes
				}
			}
		}
		if e.stopped || ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if cur = next; len(cur) == 0 {
			break
		}
	}
	return cur, notes, nil
}

// childrenOf lists the children of the nodes of cur, or with desc of each
// node of cur and of its descendants, visited as the RFC orders them.
func (e *evaluator) childrenOf(cur []span, desc bool) ([]span, error) {
	var out []span
	add := func(val span) bool {
		out = append(out, val)
		return len(out) <= maxNodes
	}
	for _, v := range cur {
		if c := e.kindAt(v); c != '{' && c != '[' {
			continue
		}
		ok := true
		switch {
		case !desc:
			ok = e.eachChild(v, func(_, val span) bool { return add(val) })
		default:
			t := e.d.tape()
			ok = e.descend(v, func(k int, x span) bool {
				if k < 0 {
					return e.eachChild(x, func(_, val span) bool { return add(val) })
				}
				return e.tapeChildren(t, k, add)
			})
		}
		if e.stopped {
			return nil, e.ctx.Err()
		}
		if !ok {
			return nil, errTooManyNodes
		}
	}
	return out, nil
}

// keep is the nodes of cands the filter holds for, in order, evaluated
// on every core after its numbers as text are found.
func (d *doc) keep(ctx context.Context, cands []span, f *fnode, notes *[]numNote) ([]span, error) {
	it := d.nodeItems(cands)
	flt := &filter{root: f}
	scan, err := markNumText(ctx, it, flt)
	if err != nil {
		return nil, err
	}
	idx, err := selectItems(ctx, it, flt)
	if err != nil {
		return nil, err
	}
	*notes = append(*notes, scan.notes()...)
	out := make([]span, len(idx))
	for i, j := range idx {
		out[i] = cands[j]
	}
	return out, nil
}

// normPath is the normalized path (RFC 9535 §2.7) of the node starting at
// byte off: $['items'][3]['name']. It walks down from the root, so it is
// for the few nodes an answer shows.
func (d *doc) normPath(off int) string {
	var b strings.Builder
	b.WriteByte('$')
	var v span
	if d.kind == kindNDJSON {
		i := sort.Search(len(d.records), func(i int) bool { return d.records[i].end > off })
		if i == len(d.records) {
			return "$"
		}
		b.WriteString("[" + strconv.Itoa(i) + "]")
		v = d.records[i]
	} else {
		v = d.root().v
	}
	for v.start != off {
		if c := d.data[v.start]; c != '{' && c != '[' {
			break
		}
		kids := d.members(node{v: v})
		j := sort.Search(len(kids), func(j int) bool { return kids[j].val.end > off })
		if j == len(kids) || kids[j].val.start > off {
			break
		}
		if d.data[v.start] == '[' {
			b.WriteString("[" + strconv.Itoa(j) + "]")
		} else {
			b.WriteString("[" + normName(keyString(d.data, kids[j].key)) + "]")
		}
		v = kids[j].val
	}
	return b.String()
}

// normName is a name as a normalized path writes it: in single quotes,
// with \b \f \n \r \t \' \\ and \u00xx for the other control characters.
func normName(k string) string { return quoted(k, '\'') }
