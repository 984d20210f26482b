package explore

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// patternTooLong is grep's or count_by's answer to a pattern of n bytes,
// past [MaxPatternBytes].
func patternTooLong(name string, n int) *tool.Result {
	msg := fmt.Sprintf("the pattern is %d bytes; count_by accepts at most %d.", n, MaxPatternBytes)
	if name == ToolGrep {
		msg = fmt.Sprintf("the pattern is %d bytes; grep accepts at most %d. Search for a distinctive part of it.", n, MaxPatternBytes)
	}
	return errorResult("pattern_too_long", msg, kv{"pattern_bytes", n}, kv{"max_pattern_bytes", MaxPatternBytes})
}

// runCountLines is count_by over the lines of a file (any kind: it is
// read as text): the lines pattern matches, grouped by what its first
// capture group captured, top ones shown, the rest summed in other.
func runCountLines(c *call, pattern string, top int) *tool.Result {
	if len(pattern) > MaxPatternBytes {
		return patternTooLong(ToolCountBy, len(pattern))
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return errorResult("invalid_pattern", fmt.Sprintf("pattern is not an RE2 regular expression: %v.", err), kv{"pattern", pattern})
	}
	if re.NumSubexp() < 1 {
		return errorResult("invalid_pattern", `pattern needs a capture group, whose text each matching line is counted by: e.g. "service=(\w+)".`,
			kv{"pattern", pattern},
			kv{"suggestions", []suggestion{suggest(ToolCountBy, "group by the whole match", kv{"file", c.file}, kv{"pattern", "(" + pattern + ")"}, kv{"top", top})}})
	}
	name := re.SubexpNames()[1]
	if name == "" {
		name = "match"
	}
	d, res := c.load()
	if res != nil {
		return res
	}
	counts := map[string]int{}
	lines, matched, untracked := 0, 0, 0
	data := d.data
	for start := 0; start < len(data); lines++ {
		if lines%4096 == 0 && c.ctx.Err() != nil {
			return c.cancelled(c.ctx.Err())
		}
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		line := data[start:end]
		start = end + 1
		m := re.FindSubmatchIndex(line)
		if m == nil || m[2] < 0 {
			continue // no match, or the group took no part in it
		}
		matched++
		key := line[m[2]:m[3]]
		if n, ok := counts[string(key)]; ok {
			counts[string(key)] = n + 1
		} else if len(counts) < maxGroups {
			counts[string(key)] = 1
		} else {
			untracked++
		}
	}
	type row struct {
		key   string
		count int
	}
	rows := make([]row, 0, len(counts))
	for k, n := range counts {
		rows = append(rows, row{k, n})
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.count != b.count {
			return b.count - a.count
		}
		return compareValues(a.key, b.key)
	})
	shown := rows[:min(top, len(rows))]
	var b countList
	line := b.add
	for _, r := range shown {
		line(obj{{name, r.key}, {"count", r.count}})
	}
	otherGroups, otherCount := len(rows)-len(shown), untracked
	for _, r := range rows[len(shown):] {
		otherCount += r.count
	}
	if otherGroups > 0 || untracked > 0 {
		o := obj{{"other_groups", otherGroups}, {"count", otherCount}}
		if untracked > 0 {
			o = append(o, kv{"untracked_lines", untracked})
		}
		line(o)
	}

	var what strings.Builder
	fmt.Fprintf(&what, "lines by /%s/ (%s", pattern, plural(len(rows), "group"))
	if untracked > 0 {
		fmt.Fprintf(&what, "+ (tracking stops at %s)", Comma(maxGroups))
	}
	if len(shown) < len(rows) {
		fmt.Fprintf(&what, ", top %d shown", len(shown))
	}
	fmt.Fprintf(&what, "; matches %s of %s)", Comma(matched), plural(lines, "line"))
	return c.finish(b.String(), what.String(), func() []suggestion {
		return []suggestion{suggest(ToolCountBy, "fewer groups", kv{"file", c.file}, kv{"pattern", pattern}, kv{"top", max(1, len(shown)/2)})}
	})
}

// runCountMatches is count_by with nothing to group by: how many items of
// the array at the path match the filter, or how many nodes the path
// selects (and of them match the filter).
func runCountMatches(c *call, t *target, q itemQuery) *tool.Result {
	it, res := c.items(t)
	if res != nil {
		return res
	}
	d, canon := t.d, t.canon
	retry := c.retryWith(append([]kv{{"file", c.file}, {"path", canon}}, q.kvs()...))
	if res := c.parseQuery(it, &q, retry); res != nil {
		return res
	}
	var scan *numScan
	if q.f != nil {
		var err error
		if scan, err = markNumText(c.ctx, it, q.f); err != nil {
			return c.cancelled(err)
		}
	}
	r, err := aggregate(c.ctx, it, aggSpec{filter: q.f})
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
	body := fmt.Sprintf("[\n  {\"count\": %d}\n]", r.matched)
	var what string
	if q.f == nil {
		what = fmt.Sprintf("%s (%s)", canon, plural(r.scanned, "node"))
	} else {
		what = fmt.Sprintf("%s matching %s (matches %s, scanned %s%s)", canon, q.filterText, Comma(r.matched), Comma(r.scanned), numNotesText(c.notes))
	}
	return c.finish(body, what, func() []suggestion { return nil })
}

// compareValues orders two group values: numerically when both are
// numbers (JSON's, or a capture of digits), else as strings; so ties in a
// count list 9 before 10.
func compareValues(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil && x != y:
		if x < y {
			return -1
		}
		return 1
	case errA == nil && errB != nil:
		return -1 // numbers before other values
	case errA != nil && errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
