package explore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// target is what a path argument selects: one value (a singular path), or
// a node list.
type target struct {
	d     *doc
	n     node   // singular: the value
	canon string // singular: its canonical path; a node list: the path as given
	nodes []span // a node list
	multi bool
}

// resolveTarget loads the JSON file and evaluates the path argument. A
// path ending in a filter over an array ($.items[?@.x == 1]), when no
// filter argument was given, is that array with the filter moved into q:
// the answer is the same node list, with the matches counted out of the
// items scanned.
func (c *call) resolveTarget(p string, q *itemQuery) (*target, *tool.Result) {
	d, res := c.loadJSON()
	if res != nil {
		return nil, res
	}
	pq, res := c.parsePathArg(p)
	if res != nil {
		return nil, res
	}
	if t := c.splitFilter(d, pq, q); t != nil {
		return t, nil
	}
	if pq.singular {
		n, canon, miss := d.resolve(segments(pq))
		if miss != nil {
			return nil, c.notFound(d, p, miss)
		}
		return &target{d: d, n: n, canon: canon}, nil
	}
	nodes, notes, err := d.selectPath(c.ctx, pq)
	switch {
	case errors.Is(err, errTooManyNodes):
		// A result past any cap, refused before it is built: the tool's
		// too-large answer, with the bound instead of an estimate.
		return nil, errorResult(c.tool+"_too_large", fmt.Sprintf("%s: %v, past what one call lists. None of it was returned; only this message was (and charged). narrow the path (name the array instead of reaching every node with ..).", p, err),
			kv{"path", p}, kv{"max_nodes", maxNodes}, kv{"suggestions", []suggestion{suggest(ToolSchema, "the key tree, to find a narrower path", kv{"file", c.file}, kv{"max_depth", 3})}})
	case err != nil:
		return nil, c.cancelled(err)
	}
	c.notes = append(c.notes, notes...)
	return &target{d: d, canon: strings.TrimSpace(p), nodes: nodes, multi: true}, nil
}

// splitFilter is the target of a path whose last segment is one filter
// over the array a singular path reaches, the filter moved into q; nil
// when the path is not such.
func (c *call) splitFilter(d *doc, pq *fquery, q *itemQuery) *target {
	k := len(pq.segs) - 1
	if q == nil || q.filterText != "" || k < 0 {
		return nil
	}
	last := pq.segs[k]
	if last.desc || len(last.sels) != 1 || last.sels[0].kind != selFilter {
		return nil
	}
	prefix := &fquery{abs: true, singular: true}
	for _, s := range pq.segs[:k] {
		prefix.add(s)
	}
	if !prefix.singular {
		return nil
	}
	n, canon, miss := d.resolve(segments(prefix))
	if miss != nil || d.typeOf(n) != "array" {
		return nil
	}
	q.filterText = "?" + last.sels[0].fsrc
	return &target{d: d, n: n, canon: canon}
}

// items are the items a query tool runs over: the elements of the array a
// singular path reaches, or a path's nodes; not_an_array for another
// value.
func (c *call) items(t *target) (items, *tool.Result) {
	if t.multi {
		return t.d.nodeItems(t.nodes), nil
	}
	if t.d.typeOf(t.n) != "array" {
		return items{}, c.notArray(t.d, t.n, t.canon)
	}
	return t.d.itemsOf(t.n), nil
}

// itemPath is the path of item i for a suggestion: the array's path and
// the index, or the node's normalized path.
func (c *call) itemPath(t *target, it items, i int) string {
	if it.isNodes {
		return t.d.normPath(it.nodes[i].start)
	}
	return t.canon + renderIndex(i)
}
