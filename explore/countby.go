package explore

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// defaultTop is how many groups count_by shows when top is not given.
const defaultTop = 20

func runCountBy(c *call, a countByArgs) *tool.Result {
	p, pattern, groupArg, distinctArg, top := a.Path, a.Pattern, a.GroupBy, a.Distinct, a.Top
	q := c.queryArgs(a.Filter, "", "")
	if pattern != "" {
		if p != "" || groupArg != "" || distinctArg != "" || q.filterText != "" {
			c.errs = append(c.errs, "pattern (lines of a text file) goes without path, group_by, distinct and filter (items of a JSON array)")
		}
		if res := c.argErr(); res != nil {
			return res
		}
		if top < 1 {
			return errorResult("invalid_arguments", "top must be at least 1.", kv{"top", top})
		}
		return runCountLines(c, pattern, top)
	}
	if p == "" {
		c.errs = append(c.errs, "path is required")
	}
	if res := c.argErr(); res != nil {
		return res
	}
	if top < 1 {
		return errorResult("invalid_arguments", "top must be at least 1.", kv{"top", top})
	}
	var spec aggSpec
	var names []string
	groups, res := c.fieldList("group_by", groupArg)
	if res != nil {
		return res
	}
	for _, g := range groups {
		fq, err := parseField(g)
		if err != nil {
			return c.badField("group_by", g, err)
		}
		spec.groups = append(spec.groups, fq)
		names = append(names, g)
	}
	distinctName := strings.TrimSpace(distinctArg)
	if distinctName != "" {
		fq, err := parseField(distinctName)
		if err != nil {
			return c.badField("distinct", distinctName, err)
		}
		spec.distinct = fq
	}
	t, res := c.resolveTarget(p, &q)
	if res != nil {
		return res
	}
	if len(spec.groups) == 0 && spec.distinct == nil {
		if q.filterText != "" || t.multi {
			return runCountMatches(c, t, q)
		}
		return errorResult("invalid_arguments", `count_by needs group_by (e.g. "status.phase" or "metadata.namespace,status.phase"), distinct (e.g. "spec.containers[*].image"), a filter alone to count the matching items, or a path that selects nodes ($..[?@.type == 'file']) to count them; for a text file, pattern.`,
			kv{"group_by", groupArg}, kv{"distinct", distinctArg},
			kv{"suggestions", []suggestion{
				suggest(ToolItemSchema, "find the fields to group by", kv{"file", c.file}, kv{"path", t.canon}, kv{"limit", 100}),
			}})
	}
	it, res := c.items(t)
	if res != nil {
		return res
	}
	d, canon := t.d, t.canon
	base := []kv{{"file", c.file}, {"path", canon}}
	if groupArg != "" {
		base = append(base, kv{"group_by", strings.Join(names, ",")})
	}
	if distinctName != "" {
		base = append(base, kv{"distinct", distinctName})
	}
	base = append(base, q.kvs()...)
	retry := c.retryWith(append(base, kv{"top", top}))
	if res := c.parseQuery(it, &q, retry); res != nil {
		return res
	}
	spec.filter = q.f
	for i, g := range spec.groups {
		if m := missingField(c.ctx, d, it, g); m != nil {
			return c.missingFieldError("group_by", names[i], m, canon, retry)
		}
	}
	if spec.distinct != nil {
		if m := missingField(c.ctx, d, it, spec.distinct); m != nil {
			return c.missingFieldError("distinct", distinctName, m, canon, retry)
		}
	}
	var scan *numScan
	if q.f != nil {
		var err error
		if scan, err = markNumText(c.ctx, it, q.f); err != nil {
			return c.cancelled(err)
		}
	}
	r, err := aggregate(c.ctx, it, spec)
	if err != nil {
		return c.cancelled(err)
	}
	c.notes = append(c.notes, scan.notes()...)
	if r.matched == 0 && q.f != nil {
		for _, rq := range relQueries(q.f.root, nil) {
			if m := missingField(c.ctx, d, it, rq); m != nil {
				return c.missingFieldError("filter", q.filterText, m, canon, retry)
			}
		}
		if err := c.ctx.Err(); err != nil {
			return c.cancelled(err)
		}
	}
	rows := r.sortedGroups()
	shown := rows[:min(top, len(rows))]
	var b countList
	line := b.add
	keyNames := names
	if len(spec.groups) == 0 {
		keyNames = []string{distinctName}
	}
	for _, row := range shown {
		var o obj
		for i, v := range strings.Split(row.key, "\x00") {
			if i < len(keyNames) {
				o = append(o, kv{keyNames[i], rawJSON(v)})
			}
		}
		o = append(o, kv{"count", row.g.count})
		if len(spec.groups) > 0 && spec.distinct != nil {
			nd := len(row.g.dist)
			if row.g.extra > 0 {
				o = append(o, kv{"distinct", fmt.Sprintf("%d+", nd)})
			} else {
				o = append(o, kv{"distinct", nd})
			}
			nums := row.g.nums
			if r.dist.state() == numText {
				nums = row.g.textNums
			}
			if st := statsOf(nums); st != nil {
				o = append(o, st.fields()...)
			}
		}
		line(o)
	}
	otherGroups, otherCount := len(rows)-len(shown), r.untracked
	for _, row := range rows[len(shown):] {
		otherCount += row.g.count
	}
	if otherGroups > 0 || r.untracked > 0 {
		otherKey := "other_groups"
		if len(spec.groups) == 0 {
			otherKey = "other_values"
		}
		o := obj{{otherKey, otherGroups}, {"count", otherCount}}
		if r.untracked > 0 {
			o = append(o, kv{"untracked_items", r.untracked})
		}
		line(o)
	}
	statsField := ""
	statsNums, nonNum := r.nums, r.nonNum
	switch r.statsState() {
	case numText:
		statsNums = r.textNums
	case numMixed:
		nonNum += len(r.textNums)
	}
	if len(spec.groups) == 0 || len(spec.groups) == 1 && spec.distinct == nil && nonNum == 0 {
		if st := statsOf(statsNums); st != nil {
			statsField = distinctName
			if len(spec.groups) == 1 {
				statsField = names[0]
			}
			line(obj{{"stats", append(obj{{"field", statsField}, {"numbers", st.n}}, st.fields()...)}})
		}
	}
	body := b.String()
	if len(rows) == 0 && r.untracked == 0 {
		body = "[]"
	}

	// Footer.
	var what strings.Builder
	what.WriteString(canon)
	if len(spec.groups) > 0 {
		fmt.Fprintf(&what, " by [%s]", strings.Join(names, ","))
		if spec.distinct != nil {
			fmt.Fprintf(&what, ", distinct %s per group", distinctName)
		}
	} else {
		fmt.Fprintf(&what, " distinct %s", distinctName)
	}
	unit := "group"
	if len(spec.groups) == 0 {
		unit = "value"
	}
	fmt.Fprintf(&what, " (%s", plural(len(rows), unit))
	if r.untracked > 0 {
		fmt.Fprintf(&what, "+ (tracking stops at %s; %s in further groups counted in other)", Comma(maxGroups), plural(r.untracked, "item"))
	}
	if len(shown) < len(rows) {
		fmt.Fprintf(&what, ", top %d shown", len(shown))
	}
	if q.f != nil {
		fmt.Fprintf(&what, "; matches %s, scanned %s", Comma(r.matched), Comma(r.scanned))
	} else {
		unit := "item"
		if it.isNodes {
			unit = "node"
		}
		fmt.Fprintf(&what, "; %s", plural(r.scanned, unit))
	}
	if len(spec.groups) == 0 && r.missing > 0 {
		fmt.Fprintf(&what, ", %s without it", Comma(r.missing))
	}
	if statsField != "" && nonNum > 0 {
		fmt.Fprintf(&what, "; stats over %s numbers, %s other values", Comma(len(statsNums)), Comma(nonNum))
	}
	if len(spec.groups) <= 1 && (len(spec.groups) == 0 || spec.distinct == nil) {
		if st := r.statsState(); st != numNone {
			field := distinctName
			if len(spec.groups) == 1 {
				field = names[0]
			}
			c.notes = append(c.notes, numNote{field: field, state: st, how: "its stats over the JSON numbers only"})
		}
	} else if spec.distinct != nil {
		if st := r.dist.state(); st != numNone {
			c.notes = append(c.notes, numNote{field: distinctName, state: st, how: "its stats over the JSON numbers only"})
		}
	}
	what.WriteString(numNotesText(c.notes))
	what.WriteString(")")
	return c.finish(body, what.String(), func() []suggestion {
		s := []suggestion{retry("fewer groups", kv{"top", max(1, len(shown)/2)})}
		if len(names) > 1 {
			s = append(s, retry("group by the first field only", kv{"group_by", names[0]}))
		}
		return s
	})
}

// splitFields splits a comma-separated field list, keeping commas inside
// brackets and quotes (metadata.labels['a,b']).
// fieldList splits a list of fields (fields, group_by), at most
// maxFields of them.
func (c *call) fieldList(arg, text string) ([]string, *tool.Result) {
	fields := splitFields(text)
	if len(fields) > maxFields {
		return nil, errorResult("invalid_arguments", fmt.Sprintf("%s names %d fields; at most %d fit one call.", arg, len(fields), maxFields),
			kv{"max_fields", maxFields})
	}
	return fields, nil
}

func splitFields(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[' || c == '(':
			depth++
		case c == ']' || c == ')':
			depth--
		case c == ',' && depth == 0:
			if f := strings.TrimSpace(s[start:i]); f != "" {
				out = append(out, f)
			}
			start = i + 1
		}
	}
	if f := strings.TrimSpace(s[start:]); f != "" {
		out = append(out, f)
	}
	return out
}

// countList is the body of a count_by answer: one JSON object a line in a
// JSON array.
type countList struct{ b bytes.Buffer }

func (l *countList) add(o obj) {
	if l.b.Len() == 0 {
		l.b.WriteString("[\n")
	} else {
		l.b.WriteString(",\n")
	}
	j, _ := tool.MarshalNoEscape(o)
	l.b.WriteString("  ")
	l.b.Write(j)
}

// String is the array; "[]" when nothing was added.
func (l *countList) String() string {
	if l.b.Len() == 0 {
		return "[]"
	}
	return l.b.String() + "\n]"
}
