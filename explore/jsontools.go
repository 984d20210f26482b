package explore

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

func (c *call) notArray(d *doc, n node, canon string) *tool.Result {
	t := d.typeOf(n)
	s := []suggestion{suggest("schema", "find the arrays and their paths", kv{"file", c.file})}
	if t == "object" {
		keys := objectKeys(d, n)
		for _, k := range keys {
			if ch, ok := d.resolveRel(n, []segment{{kind: segKey, key: k}}); ok && d.typeOf(ch) == "array" {
				s = append(s, suggest(c.tool, "an array under this object", kv{"file", c.file}, kv{"path", canon + renderKey(k)}, kv{"offset", 0}, kv{"limit", 50}))
				break
			}
		}
	}
	return errorResult("not_an_array", fmt.Sprintf("%s is %s, not an array; %s needs the path of an array.", canon, article(t), c.tool),
		kv{"path", canon}, kv{"type", t}, kv{"suggestions", s})
}

func runGetIn(c *call, a getInArgs) *tool.Result {
	p := a.Path
	off, lim, hasOff, hasLim := a.window()
	q := c.queryArgs(a.Filter, "", "")
	tg, res := c.resolveTarget(p, &q)
	if res != nil {
		return res
	}
	if tg.multi || q.active() {
		return c.getInItems(tg, &q, off, lim, hasLim)
	}
	d, n, canon := tg.d, tg.n, tg.canon
	windowed := hasOff || hasLim
	t := d.typeOf(n)
	var body, what string
	var cur [2]int // current window, for suggestions
	switch {
	case t == "string":
		s := jsonscan.Unquote(d.data[n.v.start:n.v.end])
		lines := strings.SplitAfter(s, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		lo, hi := window(len(lines), off, lim, hasLim)
		cur = [2]int{lo, hi}
		body = strings.Join(lines[lo:hi], "")
		what = fmt.Sprintf("%s (string, %s)", canon, windowText("lines", lo, hi, len(lines), !windowed))
	case windowed && (t == "array" || t == "object") || n.records:
		ln := d.length(n)
		lo, hi := window(ln, off, lim, hasLim)
		cur = [2]int{lo, hi}
		if hi > lo {
			// Decided from the window's bytes before they are copied (a
			// limit of 10^9 over a gigabyte array would copy it twice).
			first := d.elem(n, lo).v.start
			if t == "object" {
				first = d.members(n)[lo].key.start
			}
			if size := d.elem(n, hi-1).v.end - first; size > c.env.maxTokens()*bytesPerTokenBound {
				return c.tooLarge(c.windowEstimate(d, n, t, lo, hi, first, size), kv{"per_call_limit", c.env.maxTokens()}, func() []suggestion { return c.getInSuggestions(d, n, canon, cur, windowed) })
			}
		}
		raw := windowJSON(d, n, t, lo, hi)
		unit := "items"
		if t == "object" {
			unit = "keys"
		}
		body = string(prettyJSON(raw, span{0, len(raw)}))
		what = fmt.Sprintf("%s (%s)", canon, windowText(unit, lo, hi, ln, !windowed))
	default:
		if n.v.end-n.v.start > c.env.maxTokens()*bytesPerTokenBound {
			return c.tooLarge(c.valueEstimate(d, n, t), kv{"per_call_limit", c.env.maxTokens()}, func() []suggestion { return c.getInSuggestions(d, n, canon, cur, windowed) })
		}
		body = string(prettyJSON(d.data, n.v))
		what = fmt.Sprintf("%s (%s)", canon, describe(d, n))
	}
	return c.finish(body, what, func() []suggestion { return c.getInSuggestions(d, n, canon, cur, windowed) })
}

// describe is a one-phrase summary of a value: "object, 3 keys",
// "array, 120 items", "string", ...
func describe(d *doc, n node) string {
	switch t := d.typeOf(n); t {
	case "object":
		return "object, " + plural(d.length(n), "key")
	case "array":
		return "array, " + plural(d.length(n), "item")
	default:
		return t
	}
}

func (c *call) getInSuggestions(d *doc, n node, canon string, cur [2]int, windowed bool) []suggestion {
	f := kv{"file", c.file}
	var s []suggestion
	t := d.typeOf(n)
	size := cur[1] - cur[0]
	switch {
	case t == "string":
		if !windowed {
			size = 200
		}
		s = append(s, suggest("get_in", "fewer lines of the string", f, kv{"path", canon}, kv{"offset", cur[0]}, kv{"limit", max(1, size/2)}))
		s = append(s, suggest("grep", "find the part you need", f, kv{"pattern", "error"}, kv{"ignore_case", true}, kv{"max_matches", 20}))
	case t == "array":
		ln := d.length(n)
		if !windowed {
			cur, size = [2]int{0, ln}, ln
		}
		s = append(s, suggest("get_in", "half the items", f, kv{"path", canon}, kv{"offset", cur[0]}, kv{"limit", max(1, size/2)}).halving())
		if ln > 0 {
			s = append(s, suggest("item_schema", "the keys its items have", f, kv{"path", canon}, kv{"offset", 0}, kv{"limit", min(ln, 100)}))
			s = append(s, suggest("get_in", "one item", f, kv{"path", canon + renderIndex(cur[0])}))
			if fields := firstFields(d, d.elem(n, min(cur[0], ln-1)), 3); fields != "" {
				s = append(s, suggest("iterate_over", "a few fields of each item", f, kv{"path", canon}, kv{"fields", fields}, kv{"offset", cur[0]}, kv{"limit", 50}))
			}
		}
	case t == "object":
		ln := d.length(n)
		if !windowed {
			cur, size = [2]int{0, ln}, ln
		}
		s = append(s, suggest("get_in", "half the keys", f, kv{"path", canon}, kv{"offset", cur[0]}, kv{"limit", max(1, size/2)}).halving())
		s = append(s, suggest("schema", "the key tree with types", f, kv{"max_depth", 2}))
		if keys := objectKeys(d, n); len(keys) > 0 {
			s = append(s, suggest("get_in", "one key", f, kv{"path", canon + renderKey(keys[0])}))
		}
	}
	return s
}

// firstFields lists up to k scalar keys of an object, comma-separated.
func firstFields(d *doc, n node, k int) string {
	if d.typeOf(n) != "object" {
		return ""
	}
	var out []string
	for _, m := range d.members(n) {
		t := jsonType(d.data, m.val.start)
		if t != "object" && t != "array" {
			out = append(out, keyString(d.data, m.key))
		}
		if len(out) == k {
			break
		}
	}
	return strings.Join(out, ",")
}

func runIterateOver(c *call, a iterateArgs) *tool.Result {
	p := a.Path
	fieldsArg := a.Fields
	off, lim, hasOff, hasLim := a.window()
	q := c.queryArgs(a.Filter, a.SortBy, a.Order)
	if res := c.argErr(); res != nil {
		return res
	}
	var names []string
	var fqs []*fquery
	fieldList, res := c.fieldList("fields", fieldsArg)
	if res != nil {
		return res
	}
	for _, f := range fieldList {
		fq, err := parseField(f)
		if err != nil {
			return errorResult("invalid_arguments", fmt.Sprintf("field %q: %v", f, err), kv{"fields", fieldsArg})
		}
		names = append(names, f)
		fqs = append(fqs, fq)
	}
	if len(names) == 0 {
		return errorResult("invalid_arguments", `fields must name at least one field, e.g. "id,title,meta.author".`, kv{"fields", fieldsArg})
	}
	t, res := c.resolveTarget(p, &q)
	if res != nil {
		return res
	}
	it, res := c.items(t)
	if res != nil {
		return res
	}
	d, canon := t.d, t.canon
	ln := it.len()
	total, scanned := ln, ln
	var idx []int
	base := append([]kv{{"file", c.file}, {"path", canon}, {"fields", strings.Join(names, ",")}}, q.kvs()...)
	if q.active() {
		retry := c.retryWith(append(base, kv{"offset", off}, kv{"limit", max(lim, 20)}))
		if res := c.parseQuery(it, &q, retry); res != nil {
			return res
		}
		if idx, scanned, res = c.selectQuery(it, canon, &q, retry); res != nil {
			return res
		}
		total = len(idx)
	}
	lo, hi := window(total, off, lim, hasLim)
	qnames := make([][]byte, len(names))
	for i, nm := range names {
		qnames[i], _ = tool.MarshalNoEscape(nm)
	}
	var b bytes.Buffer
	e := newEvaluator(d)
	// Rows are written up to the size no answer under the per-call cap
	// can have (bytesPerTokenBound); past it each row is only measured,
	// in a buffer it reuses, for the too-large answer.
	capBytes := c.env.maxTokens() * bytesPerTokenBound
	var spill bytes.Buffer
	over := 0
	if lo == hi {
		b.WriteString("[]")
	} else {
		b.WriteString("[\n")
		for j := lo; j < hi; j++ {
			if j&1023 == 1023 && c.ctx.Err() != nil {
				return c.cancelled(c.ctx.Err())
			}
			w := &b
			if b.Len() > capBytes {
				spill.Reset()
				w = &spill
			}
			i := j
			if idx != nil {
				i = idx[j]
			}
			item, ok := it.at(i)
			if it.isNodes {
				w.WriteString(`  {"_path":`)
				pj, _ := tool.MarshalNoEscape(d.normPath(item.start))
				w.Write(pj)
			} else {
				w.WriteString(`  {"_index":`)
				w.WriteString(strconv.Itoa(i))
			}
			if !ok {
				fmt.Fprintf(w, `,"_error":"record on line %d is not valid JSON"`, d.lineOf(d.records[i].start))
			} else {
				for k, fq := range fqs {
					w.WriteByte(',')
					w.Write(qnames[k])
					w.WriteByte(':')
					if fq.singular {
						if v, ok := e.single(fq, item); ok {
							w.Write(compact(d.data, v))
						} else {
							w.WriteString("null")
						}
						continue
					}
					w.WriteByte('[')
					n := 0
					e.nodes(fq, item, func(s span) bool {
						if n++; n > 1 {
							w.WriteByte(',')
						}
						w.Write(compact(d.data, s))
						return true
					})
					w.WriteByte(']')
				}
			}
			w.WriteByte('}')
			if j < hi-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
			if w == &spill {
				over += spill.Len()
			}
		}
		b.WriteString("]")
	}
	full := !hasOff && !hasLim
	unit := "items"
	if it.isNodes {
		unit = "nodes"
	}
	win := windowText(unit, lo, hi, ln, full)
	if q.active() {
		win = matchesText(lo, hi, total, scanned, q.f != nil) + q.describe()
	}
	what := fmt.Sprintf("%s (%s, fields: [%s]%s)", canon, win, strings.Join(names, ","), numNotesText(c.notes))
	sugg := func() []suggestion {
		f := kv{"file", c.file}
		half := max(1, (hi-lo)/2)
		qa := q.kvs()
		s := []suggestion{suggest("iterate_over", "the same rows, half the window; continue with the next offset", append(append([]kv{f, {"path", canon}, {"fields", strings.Join(names, ",")}}, qa...), kv{"offset", lo}, kv{"limit", half})...).halving()}
		if len(names) > 1 {
			s = append(s, suggest("iterate_over", "fewer fields", append(append([]kv{f, {"path", canon}, {"fields", strings.Join(names[:(len(names)+1)/2], ",")}}, qa...), kv{"offset", lo}, kv{"limit", max(1, hi-lo)})...))
		}
		if ln == 0 {
			return s
		}
		first := min(lo, ln-1)
		if idx != nil && lo < len(idx) {
			first = idx[lo]
		}
		s = append(s, suggest("get_in", "one item whole", f, kv{"path", c.itemPath(t, it, first)}))
		firstItem, _ := it.at(first)
		if g := firstFields(d, node{v: firstItem}, 1); q.f != nil && g != "" {
			s = append(s, suggest("count_by", "just count the matches", f, kv{"path", canon}, kv{"group_by", g}, kv{"filter", q.filterText}))
		} else if fq := fqs[0]; fq.singular && len(fq.segs) > 0 {
			if sel := fq.segs[len(fq.segs)-1].sels[0]; sel.kind == selName {
				s = append(s, suggest("grep", "find items by a field's text", f, kv{"pattern", `"` + sel.name + `"`}, kv{"context", 0}, kv{"max_matches", 20}))
			}
		}
		return s
	}
	if over > 0 {
		return c.tooLarge(c.rateEstimate(b.String(), b.Len(), b.Len()+over+1), kv{"per_call_limit", c.env.maxTokens()}, sugg)
	}
	return c.finish(b.String(), what, sugg)
}

// article prefixes a JSON type name with "a" or "an".
func article(t string) string {
	if strings.IndexByte("aeiou", t[0]) >= 0 {
		return "an " + t
	}
	return "a " + t
}

// getInItems is get_in over items: a path's node list, or the matching
// items of an array with a filter, windowed by offset/limit over them.
func (c *call) getInItems(t *target, q *itemQuery, off, lim int, hasLim bool) *tool.Result {
	it, res := c.items(t)
	if res != nil {
		return res
	}
	d, canon := t.d, t.canon
	base := []kv{{"file", c.file}, {"path", canon}}
	if q.filterText != "" {
		base = append(base, kv{"filter", q.filterText})
	}
	retry := c.retryWith(append(base, kv{"offset", off}, kv{"limit", max(lim, 10)}))
	if res := c.parseQuery(it, q, retry); res != nil {
		return res
	}
	var idx []int
	scanned := it.len()
	if q.f != nil {
		if idx, scanned, res = c.selectQuery(it, canon, q, retry); res != nil {
			return res
		}
	} else {
		idx = make([]int, it.len())
		for i := range idx {
			idx[i] = i
		}
	}
	lo, hi := window(len(idx), off, lim, hasLim)
	var what string
	if q.f != nil {
		what = fmt.Sprintf("%s (%s%s)", canon, matchesText(lo, hi, len(idx), scanned, true), numNotesText(c.notes))
	} else {
		what = fmt.Sprintf("%s (%s%s)", canon, nodesText(lo, hi, len(idx)), numNotesText(c.notes))
	}
	sugg := func() []suggestion {
		f := kv{"file", c.file}
		unit := "matches"
		if q.f == nil {
			unit = "nodes"
		}
		s := []suggestion{retry("half the "+unit+"; continue with the next offset", kv{"offset", lo}, kv{"limit", max(1, (hi-lo)/2)}).halving()}
		if hi > lo {
			first, _ := it.at(idx[lo])
			if fields := firstFields(d, node{v: first}, 3); fields != "" {
				args := []kv{f, {"path", canon}, {"fields", fields}}
				if q.filterText != "" {
					args = append(args, kv{"filter", q.filterText})
				}
				s = append(s, suggest("iterate_over", "a few fields of each", append(args, kv{"offset", lo}, kv{"limit", 50})...))
			}
			s = append(s, suggest("get_in", "the first one whole", f, kv{"path", c.itemPath(t, it, idx[lo])}))
		}
		return s
	}
	// Decided from the items' bytes before they are copied.
	size := 0
	for _, i := range idx[lo:hi] {
		if s, ok := it.at(i); ok {
			size += s.end - s.start + 1
		}
	}
	if size > c.env.maxTokens()*bytesPerTokenBound {
		// Measured on the first ones as they would be written.
		k, of := lo, 0
		for k < hi && of < estimateSample {
			if s, ok := it.at(idx[k]); ok {
				of += s.end - s.start + 1
			}
			k++
		}
		head := joinRaw(d, it, idx[lo:k])
		return c.tooLarge(c.rateEstimate(string(prettyJSON(head, span{0, len(head)})), of, size), kv{"per_call_limit", c.env.maxTokens()}, sugg)
	}
	raw := joinRaw(d, it, idx[lo:hi])
	body := string(prettyJSON(raw, span{0, len(raw)}))
	return c.finish(body, what, sugg)
}

// nodesText renders "nodes [0..20) of 57".
func nodesText(lo, hi, n int) string {
	return fmt.Sprintf("nodes [%d..%d) of %s", lo, hi, Comma(n))
}

// windowJSON is the JSON of items [lo, hi) of the array (or members of
// the object, t "object") at n, as get_in writes a window before
// pretty-printing it; a broken NDJSON record is null.
func windowJSON(d *doc, n node, t string, lo, hi int) []byte {
	var raw bytes.Buffer
	open, close := byte('['), byte(']')
	if t == "object" {
		open, close = '{', '}'
	}
	raw.WriteByte(open)
	mem := d.members(n)
	for i := lo; i < hi; i++ {
		if i > lo {
			raw.WriteByte(',')
		}
		if t == "object" {
			raw.Write(d.data[mem[i].key.start:mem[i].key.end])
			raw.WriteByte(':')
		}
		e := d.elem(n, i)
		if n.records && d.badRecord(i) {
			raw.WriteString("null")
			continue
		}
		raw.Write(d.data[e.v.start:e.v.end])
	}
	raw.WriteByte(close)
	return raw.Bytes()
}

// windowEstimate is [call.rateEstimate] of the window [lo, hi) of the
// array or object at n (its source bytes from first, size of them),
// measured on its first items pretty-printed as get_in writes them.
func (c *call) windowEstimate(d *doc, n node, t string, lo, hi, first, size int) int {
	k := lo + 1
	for k < hi && d.elem(n, k-1).v.end-first < estimateSample {
		k++
	}
	head := windowJSON(d, n, t, lo, k)
	return c.rateEstimate(string(prettyJSON(head, span{0, len(head)})), d.elem(n, k-1).v.end-first, size)
}

// valueEstimate is the too-large count of get_in's whole value at n: an
// array or object measured as [call.windowEstimate] of all its items (its
// stored bytes are indented for its depth, the answer from depth 0), any
// other value on its stored bytes.
func (c *call) valueEstimate(d *doc, n node, t string) int {
	if ln := d.length(n); (t == "array" || t == "object") && ln > 0 {
		first := d.elem(n, 0).v.start
		if t == "object" {
			first = d.members(n)[0].key.start
		}
		return c.windowEstimate(d, n, t, 0, ln, first, n.v.end-n.v.start)
	}
	v := d.data[n.v.start:n.v.end]
	sample := v[:min(len(v), estimateSample)]
	return c.rateEstimate(string(sample), len(sample), len(v))
}
