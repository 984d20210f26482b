package explore

import (
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

func runItemSchema(c *call, a itemSchemaArgs) *tool.Result {
	p := a.Path
	off, lim, hasOff, hasLim := a.window()
	d, n, canon, res := c.resolveArg(p)
	if res != nil {
		return res
	}
	if d.typeOf(n) != "array" {
		return c.notArray(d, n, canon)
	}
	ln := d.length(n)
	lo, hi := window(ln, off, lim, hasLim)
	s := newShape()
	bad := 0
	for i := lo; i < hi; i++ {
		if i&1023 == 1023 && c.ctx.Err() != nil {
			return c.cancelled(c.ctx.Err())
		}
		if n.records && d.badRecord(i) {
			bad++
			continue
		}
		s.add(d, d.elem(n, i), i, maxShapeDepth)
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
	what := fmt.Sprintf("%s (%s, %s)", canon, windowText("items", lo, hi, ln, full), plural(len(s.order), "key"))
	return c.finish(b.String(), what, func() []suggestion {
		f := kv{"file", c.file}
		return []suggestion{
			suggest("item_schema", "half the window", f, kv{"path", canon}, kv{"offset", lo}, kv{"limit", max(1, (hi-lo)/2)}).halving(),
			suggest("get_in", "one item whole", f, kv{"path", canon + renderIndex(min(lo, max(ln-1, 0)))}),
			suggest("schema", "the key tree, shallower", f, kv{"max_depth", 2}),
		}
	})
}
