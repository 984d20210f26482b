package explore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// itemQuery is the filter / sort_by / order arguments of iterate_over,
// get_in and count_by.
type itemQuery struct {
	filterText, sortText, orderText string
	f                               *filter
	sortQ                           *fquery
	desc                            bool
}

// queryArgs is the query of a filter and, for iterate_over, a sort
// field and order (the schema's enum: asc or desc).
func (c *call) queryArgs(filter, sortBy, order string) itemQuery {
	q := itemQuery{filterText: filter, sortText: sortBy, orderText: order, desc: order == "desc"}
	if order != "" && strings.TrimSpace(sortBy) == "" {
		c.errs = append(c.errs, "order needs sort_by (the field to order by)")
	}
	return q
}

func (q *itemQuery) active() bool { return q.filterText != "" || q.sortText != "" }

// kvs are the query arguments to carry into suggestions.
func (q *itemQuery) kvs() []kv {
	var out []kv
	if q.filterText != "" {
		out = append(out, kv{"filter", q.filterText})
	}
	if q.sortText != "" {
		out = append(out, kv{"sort_by", q.sortText})
		if q.desc {
			out = append(out, kv{"order", "desc"})
		}
	}
	return out
}

// describe renders the query for footers: ", sorted by x desc".
func (q *itemQuery) describe() string {
	s := ""
	if q.sortQ != nil {
		s = ", sorted by " + fieldName(q.sortQ)
		if q.desc {
			s += " desc"
		}
	}
	return s
}

// retryFunc builds the same call with other arguments replaced, for
// suggestions.
type retryFunc func(why string, replace ...kv) suggestion

func (c *call) retryWith(base []kv) retryFunc {
	return func(why string, replace ...kv) suggestion {
		args := make([]kv, 0, len(base)+len(replace))
		seen := map[string]bool{}
		for _, b := range base {
			for _, r := range replace {
				if r.K == b.K {
					b = r
				}
			}
			seen[b.K] = true
			args = append(args, b)
		}
		for _, r := range replace {
			if !seen[r.K] {
				args = append(args, r)
			}
		}
		return suggest(c.tool, why, args...)
	}
}

// parseQuery parses the filter and sort_by of q for the items it:
// bad_filter names the column and shows a corrected example;
// invalid_arguments does the same for sort_by.
func (c *call) parseQuery(it items, q *itemQuery, retry retryFunc) *tool.Result {
	if q.filterText != "" {
		f, err := parseFilter(q.filterText)
		if err != nil {
			return c.badFilter(it, q.filterText, err, retry)
		}
		q.f = f
	}
	if q.sortText != "" {
		s, err := parseField(q.sortText)
		if err != nil {
			return c.badField("sort_by", q.sortText, err)
		}
		q.sortQ = s
	}
	return nil
}

func (c *call) badField(arg, text string, err error) *tool.Result {
	var se *syntaxError
	col := 1
	if errors.As(err, &se) {
		col = se.column()
	}
	return errorResult("invalid_arguments", fmt.Sprintf("%s %q: %v. Fields look like status.phase, spec.containers[*].image or metadata.labels['app.kubernetes.io/name'].", arg, text, err),
		kv{arg, text}, kv{"column", col})
}

// filterFixes are the mistakes models make most in JSONPath filters, in
// the order they are repaired.
var filterFixes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`===`), "=="},
	{regexp.MustCompile(`!==`), "!="},
	{regexp.MustCompile(`([^=!<>~])=([^=~])`), "$1==$2"},
	{regexp.MustCompile(`(?i)\s+and\s+`), " && "},
	{regexp.MustCompile(`(?i)\s+or\s+`), " || "},
	{regexp.MustCompile(`(?i)(^|[\s(])not\s+`), "$1!"},
	{regexp.MustCompile(`\bTrue\b`), "true"},
	{regexp.MustCompile(`\bFalse\b`), "false"},
	{regexp.MustCompile(`\bNone\b`), "null"},
	// A bare field before an operator: status.phase == 'x' -> @.status.phase
	{regexp.MustCompile(`(^|[\s(!&|?])\.?([A-Za-z_][\w-]*(?:\.[\w-]+|\[[^\]]*\])*)(\s*(?:==|!=|<=|>=|<|>|=~|in\b))`), "$1@.$2$3"},
	// jq-style .field at the start of a comparand
	{regexp.MustCompile(`(^|[\s(!&|?])\.([A-Za-z_])`), "$1@.$2"},
	// A name with - after a dot needs quotes: @.app-name -> @['app-name']
	{regexp.MustCompile(`(@(?:\.[A-Za-z_]\w*|\[[^\]]*\])*)\.([A-Za-z_]\w*-[\w-]*)`), "$1['$2']"},
	// Any of several values compared (not RFC 9535): @.a[*].b == x ->
	// @.a[?@.b == x], true when one element's b is x.
	{regexp.MustCompile(`@((?:\.[A-Za-z_]\w*|\[\d+\]|\['[^']*'\])*)\[\*\]((?:\.[A-Za-z_]\w*)+)\s*(==|!=|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|true|false|null)`), "@$1[?@$2 $3 $4]"},
	// @..x compared (not RFC 9535): any descendant's x -> @..[?@.x …]
	{regexp.MustCompile(`@\.\.([A-Za-z_]\w*)\s*(==|!=|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?\d+(?:\.\d+)?|true|false|null)`), "@..[?@.$1 $2 $3]"},
}

// fixFilter tries the usual repairs and returns a filter that parses, or "".
func fixFilter(s string) string {
	t := repairFilter(s)
	if open := strings.Count(t, "(") - strings.Count(t, ")"); open > 0 && open < 10 {
		t += strings.Repeat(")", open)
	}
	if _, err := parseFilter(t); err == nil && t != s {
		return t
	}
	return ""
}

// pathFixes repair what the shorthand allows and RFC 9535 does not, in a
// path that starts with $: $.items.3 and $.kube-system.
var pathFixes = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\.(-?\d+)(\.|\[|$)`), "[$1]$2"},
	{regexp.MustCompile(`\.([A-Za-z_][\w-]*-[\w-]*)`), "['$1']"},
}

// fixPath is fixFilter for a path and the filters inside it: a path that
// parses once they are repaired, or "".
func fixPath(s string) string {
	t := repairFilter(s)
	for _, f := range pathFixes {
		t = f.re.ReplaceAllString(t, f.repl)
	}
	if _, err := parsePath(t); err == nil && t != s {
		return t
	}
	return ""
}

func repairFilter(s string) string {
	for _, f := range filterFixes {
		s = f.re.ReplaceAllString(s, f.repl)
	}
	return s
}

// exampleFilter builds a filter that runs on these items from the first:
// a comparison on its first scalar field.
func exampleFilter(it items) string {
	if it.d == nil || it.len() == 0 {
		return `?(@.status == 'failed')`
	}
	d := it.d
	s, ok := it.at(0)
	if !ok {
		return `?(@.status == 'failed')`
	}
	if f, v := firstScalar(d, s, "@", 0); f != "" {
		return "?(" + f + " == " + v + ")"
	}
	return `?(@ == 'x')`
}

func firstScalar(d *doc, s span, prefix string, depth int) (string, string) {
	switch d.data[s.start] {
	case '{':
		var f, v string
		var nested []child
		forMembers(d.data, s, func(k, val span) bool {
			c := d.data[val.start]
			if c == '{' {
				nested = append(nested, child{key: k, val: val})
				return true
			}
			if c == '[' {
				return true
			}
			f, v = prefix+quoteKey(keyString(d.data, k)), literalText(d.data[val.start:val.end])
			return false
		})
		if f != "" {
			return f, v
		}
		if depth < 3 {
			for _, ch := range nested {
				if f, v := firstScalar(d, ch.val, prefix+quoteKey(keyString(d.data, ch.key)), depth+1); f != "" {
					return f, v
				}
			}
		}
	case '[':
		return "", ""
	default:
		if depth == 0 {
			return "@", literalText(d.data[s.start:s.end])
		}
	}
	return "", ""
}

// literalText renders a raw JSON scalar as a filter literal ('...' for
// strings).
func literalText(raw []byte) string {
	if raw[0] != '"' {
		return string(raw)
	}
	v := rawVal(raw)
	s := string(v.str)
	if len(s) > 40 {
		s = s[:40]
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// badFilter is the bad_filter error: where parsing failed, a corrected
// filter when a usual repair works, and one built from the data.
func (c *call) badFilter(it items, text string, err error, retry retryFunc) *tool.Result {
	var se *syntaxError
	col := 1
	msg := err.Error()
	if errors.As(err, &se) {
		col = se.column()
		msg = se.msg
	}
	fixed := fixFilter(text)
	example := fixed
	if example == "" {
		example = exampleFilter(it)
	}
	var sugg []suggestion
	if fixed != "" {
		sugg = append(sugg, retry("the filter, corrected", kv{"filter", fixed}))
	} else {
		sugg = append(sugg, retry("a filter built from the first item; adapt the field and value", kv{"filter", example}))
	}
	return errorResult("bad_filter",
		fmt.Sprintf("filter does not parse at column %d: %s. Filters are JSONPath (RFC 9535): ?(@.status.phase == 'Failed' && @.restarts > 3), || for alternatives, match(), search(), length(), count(), value(), @.tags[?@ == 'x'] for any element; extensions: =~ /regex/i, @.x in ['a', 'b'].", col, msg),
		kv{"filter", text}, kv{"column", col}, kv{"example", example}, kv{"suggestions", sugg})
}

// relQueries lists the relative queries a filter compares or passes to a
// function, for the missing-field check. Existence tests (?(@.reason)) are
// left out: that no item has the field is their answer, not a typo.
func relQueries(n *fnode, out []*fquery) []*fquery {
	var op func(o *operand)
	op = func(o *operand) {
		if o == nil {
			return
		}
		switch o.kind {
		case oQuery:
			if !o.q.abs {
				out = append(out, o.q)
			}
		case oFunc:
			for _, a := range o.args {
				op(a)
			}
		}
	}
	switch n.op {
	case opOr, opAnd, opNot:
		for _, k := range n.kids {
			out = relQueries(k, out)
		}
	case opTest:
		if n.l.kind != oQuery {
			op(n.l)
		}
	default:
		op(n.l)
		op(n.r)
	}
	return out
}

// singularPrefix is the leading name and index segments of q.
func singularPrefix(q *fquery) *fquery {
	p := &fquery{singular: true}
	for _, s := range q.segs {
		if s.desc || len(s.sels) != 1 || !s.sels[0].singular() {
			break
		}
		p.segs = append(p.segs, s)
	}
	return p
}

// fieldMiss describes a field that no item has: the segment that fails
// in the item that gets deepest, and the keys there.
type fieldMiss struct {
	failed string   // rendered segment
	prefix string   // the part that exists, e.g. @.status
	keys   []string // keys of the object at prefix
	best   string   // closest key to the failed one
}

// missingField reports whether no item has q's singular prefix, and where
// the items that get deepest stop. Cancelled, it reports nothing: the
// caller's own work then sees ctx.
func missingField(ctx context.Context, d *doc, it items, q *fquery) *fieldMiss {
	p := singularPrefix(q)
	if len(p.segs) == 0 {
		return nil
	}
	e := newEvaluator(d)
	bestDepth, bestItem := -1, span{}
	for i := 0; i < it.len(); i++ {
		if i&1023 == 1023 && ctx.Err() != nil {
			return nil
		}
		s, ok := it.at(i)
		if !ok {
			continue
		}
		v := s
		depth := 0
		for ; depth < len(p.segs); depth++ {
			nv, ok := e.step(&p.segs[depth].sels[0], v)
			if !ok {
				break
			}
			v = nv
		}
		if depth == len(p.segs) {
			return nil
		}
		if depth > bestDepth && i < 1000 {
			bestDepth, bestItem = depth, s
		}
	}
	if bestDepth < 0 {
		return nil
	}
	v := bestItem
	for i := 0; i < bestDepth; i++ {
		v, _ = e.step(&p.segs[i].sels[0], v)
	}
	m := &fieldMiss{prefix: "@" + strings.TrimPrefix(fieldName(&fquery{segs: p.segs[:bestDepth]}), "@")}
	if bestDepth > 0 && !strings.HasPrefix(m.prefix, "@[") {
		m.prefix = "@." + strings.TrimPrefix(m.prefix, "@")
	}
	seg := p.segs[bestDepth]
	m.failed = fieldName(&fquery{segs: []qseg{seg}})
	if d.data[v.start] == '{' {
		forMembers(d.data, v, func(k, _ span) bool { m.keys = append(m.keys, keyString(d.data, k)); return len(m.keys) < 50 })
		if sel := seg.sels[0]; sel.kind == selName || sel.kind == selNameOrIndex {
			m.best = closestKey(sel.name, m.keys)
		}
	}
	return m
}

// missingFieldError is key_path_not_found for a field no item has.
func (c *call) missingFieldError(arg, text string, m *fieldMiss, canon string, retry retryFunc) *tool.Result {
	full := m.prefix + m.failed
	if !strings.HasPrefix(m.failed, "[") {
		full = m.prefix + "." + strings.TrimPrefix(m.failed, ".")
	}
	msg := fmt.Sprintf("no item of %s has %s (%s %s); the items get as far as %s", canon, full, arg, text, m.prefix)
	if len(m.keys) > 0 {
		msg += fmt.Sprintf(", which has the keys %s", strings.Join(m.keys, ", "))
	}
	msg += "."
	var sugg []suggestion
	if m.best != "" {
		failedKey := strings.TrimPrefix(m.failed, ".")
		fixed := strings.Replace(text, "."+failedKey, "."+m.best, 1)
		if fixed == text {
			fixed = strings.Replace(text, failedKey, m.best, 1)
		}
		if fixed != text {
			sugg = append(sugg, retry("closest existing key", kv{arg, fixed}))
		}
	}
	sugg = append(sugg, suggest("item_schema", "the keys the items have", kv{"file", c.file}, kv{"path", canon}, kv{"offset", 0}, kv{"limit", 100}))
	return errorResult("key_path_not_found", msg, kv{arg, text}, kv{"failed_segment", m.failed}, kv{"valid_prefix", m.prefix},
		kv{"available_keys", m.keys}, kv{"suggestions", sugg})
}

// selectQuery runs q over the items: the matching item indexes in output
// order, and how many items were scanned. A filter that matches nothing
// because a path it reads exists in no item is key_path_not_found. Fields
// whose numbers arrived as text are found first, and the call's notes say
// what was done with them.
func (c *call) selectQuery(it items, canon string, q *itemQuery, retry retryFunc) ([]int, int, *tool.Result) {
	d := it.d
	var scan *numScan
	if q.f != nil {
		var err error
		if scan, err = markNumText(c.ctx, it, q.f); err != nil {
			return nil, 0, c.cancelled(err)
		}
	}
	idx, err := selectItems(c.ctx, it, q.f)
	if err != nil {
		return nil, 0, c.cancelled(err)
	}
	c.notes = append(c.notes, scan.notes()...)
	if len(idx) == 0 && q.f != nil {
		for _, rq := range relQueries(q.f.root, nil) {
			if m := missingField(c.ctx, d, it, rq); m != nil {
				return nil, 0, c.missingFieldError("filter", q.filterText, m, canon, retry)
			}
		}
		if err := c.ctx.Err(); err != nil {
			return nil, 0, c.cancelled(err)
		}
	}
	if q.sortQ != nil {
		if m := missingField(c.ctx, d, it, q.sortQ); m != nil {
			return nil, 0, c.missingFieldError("sort_by", q.sortText, m, canon, retry)
		}
		var notes []numNote
		if idx, notes, err = sortItems(c.ctx, it, idx, q.sortQ, q.desc); err != nil {
			return nil, 0, c.cancelled(err)
		}
		c.notes = append(c.notes, notes...)
	}
	scanned := it.len()
	if it.recs {
		scanned -= len(d.badRecs)
	}
	return idx, scanned, nil
}

// matchesText renders "matches [0..20) of 38,731, scanned 193,470".
func matchesText(lo, hi, matched, scanned int, filtered bool) string {
	if !filtered {
		return fmt.Sprintf("items [%d..%d) of %s total", lo, hi, Comma(scanned))
	}
	return fmt.Sprintf("matches [%d..%d) of %s, scanned %s", lo, hi, Comma(matched), Comma(scanned))
}

// joinRaw writes items as a JSON array.
func joinRaw(d *doc, it items, idx []int) []byte {
	var raw bytes.Buffer
	raw.WriteByte('[')
	for j, i := range idx {
		if j > 0 {
			raw.WriteByte(',')
		}
		s, ok := it.at(i)
		if !ok {
			raw.WriteString("null")
			continue
		}
		raw.Write(d.data[s.start:s.end])
	}
	raw.WriteByte(']')
	return raw.Bytes()
}
