package explore

import (
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

func runItemSchema(c *call, a itemSchemaArgs) *tool.Result {
	p := a.Path
	off, lim, hasOff, hasLim := a.window()
	t, res := c.resolveTarget(p, nil)
	if res != nil {
		return res
	}
	it, res := c.items(t)
	if res != nil {
		return res
	}
	d, canon := t.d, t.canon
	ln := it.len()
	lo, hi := window(ln, off, lim, hasLim)
	s := newShape()
	bad := 0
	for i := lo; i < hi; i++ {
		if i&1023 == 1023 && c.ctx.Err() != nil {
			return c.cancelled(c.ctx.Err())
		}
		v, ok := it.at(i)
		if !ok {
			bad++
			continue
		}
		s.add(d, node{v: v}, i, maxShapeDepth)
	}
	var b strings.Builder
	if hi > lo {
		b.WriteString(s.table(""))
	}
	if s.cut {
		fmt.Fprintf(&b, "(nested arrays longer than %d elements: first %d merged)\n", maxNestedElements, maxNestedElements)
	}
	if bad > 0 {
		fmt.Fprintf(&b, "(%s not valid JSON, skipped)\n", plural(bad, "record"))
	}
	full := !hasOff && !hasLim
	unit := "items"
	if it.isNodes {
		unit = "nodes"
	}
	what := fmt.Sprintf("%s (%s, %s)", canon, windowText(unit, lo, hi, ln, full), plural(len(s.order), "key"))
	return c.finish(b.String(), what, func() []suggestion {
		f := kv{"file", c.file}
		sugg := []suggestion{suggest("item_schema", "half the window", f, kv{"path", canon}, kv{"offset", lo}, kv{"limit", max(1, (hi-lo)/2)}).halving()}
		if ln > 0 {
			sugg = append(sugg, suggest("get_in", "one item whole", f, kv{"path", c.itemPath(t, it, min(lo, ln-1))}))
		}
		return append(sugg, suggest("schema", "the key tree, shallower", f, kv{"max_depth", 2}))
	})
}
