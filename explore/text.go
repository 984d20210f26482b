package explore

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// writeShownLine writes line n of a search's answer: a line longer than
// maxShownLine is cut to a window around its match (where locate finds
// it) or its start.
func writeShownLine(b *strings.Builder, n, width int, l []byte, match bool, locate func([]byte) int) {
	if len(l) > maxShownLine {
		pos := 0
		if match {
			pos = locate(l)
		}
		l = clipAround(l, pos, maxShownLine)
	}
	writeLine(b, n, width, l, match)
}

// writeLine appends one numbered line: "  12: text", or "> 12: text" when
// marked (a grep match).
func writeLine(b *strings.Builder, n, width int, text []byte, mark bool) {
	if mark {
		b.WriteString("> ")
	} else {
		b.WriteString("  ")
	}
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b.WriteByte(' ')
	}
	b.WriteString(s)
	b.WriteString(": ")
	b.Write(text)
	b.WriteByte('\n')
}

func runHead(c *call, a headArgs) *tool.Result {
	n := a.Lines
	d, res := c.load()
	if res != nil {
		return res
	}
	total := d.lineCount()
	hi := min(n, total)
	sugg := func() []suggestion {
		var s []suggestion
		if hi > 1 {
			s = append(s, suggest("head", "half the lines", kv{"file", c.file}, kv{"lines", hi / 2}).halving())
		}
		s = append(s, suggest("schema", "the file's shape without its content", kv{"file", c.file}))
		if d.kind == kindJSON && d.jsonErr == "" || d.kind == kindNDJSON {
			s = append(s, suggest("get_in", "the first entries of the top-level value", kv{"file", c.file}, kv{"path", "$"}, kv{"offset", 0}, kv{"limit", 5}))
		}
		return s
	}
	if res := c.linesTooLarge(d, 1, hi, sugg); res != nil {
		return res
	}
	var b strings.Builder
	w := len(strconv.Itoa(hi))
	for i := 1; i <= hi; i++ {
		writeLine(&b, i, w, d.line(i), false)
	}
	what := fmt.Sprintf("%s (lines [1..%d) of %s total)", c.file, hi+1, Comma(total))
	if hi == total {
		what = fmt.Sprintf("%s (all %s)", c.file, plural(total, "line"))
	}
	return c.finish(b.String(), what, sugg)
}

// linesTooLarge is the too-large answer for lines lo..hi when they are
// too many bytes to be under the per-call cap whatever they hold (see
// bytesPerTokenBound), decided before they are copied; nil otherwise.
func (c *call) linesTooLarge(d *doc, lo, hi int, sugg func() []suggestion) *tool.Result {
	if lo > hi {
		return nil
	}
	lines := d.lineStarts()
	end := len(d.data)
	if hi < len(lines) {
		end = lines[hi]
	}
	if n := end - lines[lo-1]; n > c.env.maxTokens()*bytesPerTokenBound {
		return c.tooLarge(tokensOf(c, d.data[lines[lo-1]:end]), kv{"per_call_limit", c.env.maxTokens()}, sugg)
	}
	return nil
}

func runSlice(c *call, a sliceArgs) *tool.Result {
	start, end := a.Start, a.End
	if start < 1 || end < start {
		return errorResult("invalid_range", fmt.Sprintf("slice needs 1 <= start <= end (both inclusive, 1-based); got start=%d end=%d.", start, end),
			kv{"start", start}, kv{"end", end},
			kv{"suggestions", []suggestion{suggest("slice", "a valid range", kv{"file", c.file}, kv{"start", max(start, 1)}, kv{"end", max(end, start, 1)})}})
	}
	d, res := c.load()
	if res != nil {
		return res
	}
	total := d.lineCount()
	hi := min(end, total)
	sugg := func() []suggestion {
		mid := start + (hi-start)/2
		s := []suggestion{suggest("slice", "first half of the range", kv{"file", c.file}, kv{"start", start}, kv{"end", mid}).halving()}
		if mid+1 <= hi {
			s = append(s, suggest("slice", "second half of the range", kv{"file", c.file}, kv{"start", mid + 1}, kv{"end", hi}).halving())
		}
		return append(s, suggest("schema", "the file's shape, to target a narrower range", kv{"file", c.file}))
	}
	if res := c.linesTooLarge(d, start, hi, sugg); res != nil {
		return res
	}
	var b strings.Builder
	w := len(strconv.Itoa(hi))
	for i := start; i <= hi; i++ {
		writeLine(&b, i, w, d.line(i), false)
	}
	lo := min(start, total+1)
	what := fmt.Sprintf("%s (lines [%d..%d) of %s total)", c.file, lo, max(hi+1, lo), Comma(total))
	if start > total {
		what = fmt.Sprintf("%s (empty: start %d is past the last line, %s)", c.file, start, Comma(total))
	}
	return c.finish(b.String(), what, sugg)
}

func runRead(c *call, _ readArgs) *tool.Result {
	size, err := statSize(c.env, c.file)
	if err != nil {
		return c.fileError(err)
	}
	// A first guess from the size (~4 bytes per token) spares reading a
	// file that is small enough; one that may be too large is read and
	// counted, so the refusal states its real count.
	est := int((size + 3) / 4)
	sugg := func() []suggestion {
		return []suggestion{
			suggest("schema", "the file's shape", kv{"file", c.file}),
			suggest("head", "the first lines", kv{"file", c.file}, kv{"lines", 50}),
			suggest("grep", "find what you need", kv{"file", c.file}, kv{"pattern", "error"}, kv{"ignore_case", true}, kv{"max_matches", 20}),
		}
	}
	lim, b := c.env.maxTokens(), c.env.Budget
	d, res := c.load()
	if res != nil {
		return res
	}
	if est > lim/2 || b != nil && est > b.Remaining()/2 {
		est = tokensOf(c, d.data)
		if est > lim {
			return c.tooLarge(est, kv{"per_call_limit", lim}, sugg)
		}
		if b != nil && est > b.Remaining() {
			return c.tooLarge(est, kv{"remaining_budget_tokens", b.Remaining()}, sugg)
		}
	}
	what := fmt.Sprintf("%s (whole file, %s lines, %s bytes)", c.file, Comma(d.lineCount()), Comma(len(d.data)))
	return c.finish(string(d.data), what, sugg)
}
