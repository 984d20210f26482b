package explore

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// MaxPatternBytes is the longest grep pattern accepted.
const MaxPatternBytes = 1024

// matcher finds matching lines. next returns the start of the first matching
// line at or after from (a line start), and that line's end (excluding '\n').
type matcher interface {
	next(data []byte, from int) (start, end int, ok bool)
}

func lineBounds(data []byte, i int) (int, int) {
	s := bytes.LastIndexByte(data[:i], '\n') + 1
	e := bytes.IndexByte(data[i:], '\n')
	if e < 0 {
		return s, len(data)
	}
	return s, i + e
}

// litMatcher finds a byte literal with the SIMD-backed bytes.Index; a match
// is verified per line by re when the literal is only a required part.
type litMatcher struct {
	lit []byte
	re  *regexp.Regexp
}

func (m *litMatcher) next(data []byte, from int) (int, int, bool) {
	for from < len(data) {
		i := bytes.Index(data[from:], m.lit)
		if i < 0 {
			return 0, 0, false
		}
		s, e := lineBounds(data, from+i)
		if m.re == nil || m.re.Match(data[s:e]) {
			return s, e, true
		}
		from = e + 1
	}
	return 0, 0, false
}

// foldMatcher finds an ASCII literal case-insensitively: it scans for the
// literal's rarest byte (both cases) with IndexByte and checks the rest
// with EqualFold.
type foldMatcher struct {
	lit      []byte
	pos      int  // index in lit of the byte scanned for
	lo, up   byte // its two cases
	re       *regexp.Regexp
	nlo, nup int // cached next positions of lo and up (absolute), -2 = unknown
}

func newFoldMatcher(lit []byte, re *regexp.Regexp, sample []byte) *foldMatcher {
	// Count how often each byte (both cases) occurs in a sample of the file,
	// and scan for the literal's rarest one.
	var freq [256]int
	for _, c := range sample {
		freq[toLower(c)]++
	}
	best, bestN := 0, -1
	for i, c := range lit {
		n := freq[toLower(c)]*1000 + byteRank(c)
		if bestN < 0 || n < bestN {
			best, bestN = i, n
		}
	}
	c := lit[best]
	return &foldMatcher{lit: lit, pos: best, lo: toLower(c), up: toUpper(c), re: re, nlo: -2, nup: -2}
}

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

func toUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

// byteRank orders bytes by how common they are in logs and JSON (lower is
// rarer), so the scan stops as seldom as possible.
func byteRank(c byte) int {
	const common = " eEtTaAoOiInNsSrRhHlLdDcCuU\":,.{}0123456789mMfFpPgGwWyYbB-_vVkK/"
	if i := strings.IndexByte(common, c); i >= 0 {
		return 100 + len(common) - i
	}
	return 0
}

func (m *foldMatcher) nextByte(data []byte, from int, c byte, cached *int) int {
	if *cached != -1 && *cached >= from {
		return *cached
	}
	if *cached == -1 {
		return -1
	}
	i := bytes.IndexByte(data[from:], c)
	if i < 0 {
		*cached = -1
	} else {
		*cached = from + i
	}
	return *cached
}

func (m *foldMatcher) next(data []byte, from int) (int, int, bool) {
	for from < len(data) {
		var p int
		if m.lo == m.up {
			i := bytes.IndexByte(data[from:], m.lo)
			if i < 0 {
				return 0, 0, false
			}
			p = from + i
		} else {
			a := m.nextByte(data, from, m.lo, &m.nlo)
			b := m.nextByte(data, from, m.up, &m.nup)
			switch {
			case a < 0 && b < 0:
				return 0, 0, false
			case a < 0:
				p = b
			case b < 0:
				p = a
			default:
				p = min(a, b)
			}
		}
		st := p - m.pos
		if st < 0 || st+len(m.lit) > len(data) || !bytes.EqualFold(data[st:st+len(m.lit)], m.lit) {
			from = p + 1
			continue
		}
		s, e := lineBounds(data, st)
		if m.re == nil || m.re.Match(data[s:e]) {
			return s, e, true
		}
		from = e + 1
	}
	return 0, 0, false
}

// reMatcher has no literal to anchor on: it lets the (?m) regexp find the
// leftmost candidate in the whole buffer, then confirms on that line with
// the line-scoped regexp (a candidate may span lines via \s or [^x]).
type reMatcher struct {
	multi, line *regexp.Regexp
	// maxLen bounds a match's length in bytes (-1: unbounded), so that a
	// window may cut a long line: windows overlap by it.
	maxLen int
	ctx    context.Context // checked between windows; nil: never cancelled
}

// reWindow is the least a regexp search covers: searches are made window
// by window, so that a cancelled or abandoned grep stops within one
// window's search (RE2 cannot be interrupted within one), a fraction of a
// second even for the slowest patterns. A window is at least twice the
// longest match, so that overlapping windows advance.
const reWindow = 8 << 10

func (m *reMatcher) next(data []byte, from int) (int, int, bool) {
	window := reWindow
	if m.maxLen > 0 {
		window = max(window, 2*m.maxLen)
	}
	for from <= len(data) {
		if m.ctx != nil && m.ctx.Err() != nil {
			return 0, 0, false // grepLines reports the cancellation
		}
		// The window: whole lines up to about reWindow bytes; a longer
		// line is cut there when matches are bounded, the next window
		// starting maxLen bytes back so no match is lost.
		end, resume := len(data), len(data)+1
		if from+window < len(data) {
			end = from + window
			if nl := bytes.IndexByte(data[end:], '\n'); nl >= 0 && (m.maxLen < 0 || nl < window) {
				end += nl + 1
				resume = end
			} else if m.maxLen >= 0 {
				resume = max(from+1, end-m.maxLen)
			} else {
				end = len(data) // an unbounded pattern reads the line whole
			}
		}
		loc := m.multi.FindIndex(data[from:end])
		if loc == nil {
			if resume > len(data) {
				return 0, 0, false
			}
			from = resume
			continue
		}
		if from+loc[0] == len(data) && len(data) > 0 && data[len(data)-1] == '\n' {
			// Only the empty "line" after the final newline.
			return 0, 0, false
		}
		s, e := lineBounds(data, from+loc[0])
		if m.line.Match(data[s:e]) {
			return s, e, true
		}
		from = e + 1
	}
	return 0, 0, false
}

// matchWidth bounds the bytes a match of re can take, or -1 when it is
// unbounded (a star, a plus, an open repeat).
func matchWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return utf8.UTFMax * len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return matchWidth(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		w := matchWidth(re.Sub[0])
		if w < 0 || re.Max < 0 {
			return -1
		}
		return w * re.Max
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			w := matchWidth(sub)
			if w < 0 {
				return -1
			}
			n += w
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			w := matchWidth(sub)
			if w < 0 {
				return -1
			}
			n = max(n, w)
		}
		return n
	}
	return 0 // empty-width assertions, empty match
}

// compileGrep builds the fastest matcher for pattern. literal reports that
// the pattern was not a valid regexp and is searched as literal text.
// sample is a prefix of the file, used to pick the rarest byte to scan for.
func compileGrep(pattern string, ignoreCase bool, sample []byte) (m matcher, literal bool, reErr string) {
	flags := ""
	if ignoreCase {
		flags = "(?i)"
	}
	re, err := regexp.Compile(flags + pattern)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "error parsing regexp") {
			msg = msg[i+2:]
		}
		return literalMatcher([]byte(pattern), ignoreCase, sample), true, msg
	}
	tree, err := syntax.Parse(flags+pattern, syntax.Perl)
	if err == nil {
		tree = tree.Simplify()
		if lit, fold, complete := requiredLiteral(tree); len(lit) > 0 {
			verify := re
			if complete {
				verify = nil
			}
			if !fold {
				return &litMatcher{lit: lit, re: verify}, false, ""
			}
			if isASCII(lit) {
				return newFoldMatcher(lit, verify, sample), false, ""
			}
		}
	}
	multi := regexp.MustCompile("(?m)" + flags + pattern)
	width := -1
	if err == nil {
		width = matchWidth(tree)
	}
	return &reMatcher{multi: multi, line: re, maxLen: width}, false, ""
}

func literalMatcher(lit []byte, fold bool, sample []byte) matcher {
	if fold && isASCII(lit) {
		return newFoldMatcher(lit, nil, sample)
	}
	if fold {
		return &reMatcher{multi: regexp.MustCompile("(?im)" + regexp.QuoteMeta(string(lit))), line: regexp.MustCompile("(?i)" + regexp.QuoteMeta(string(lit))), maxLen: utf8.UTFMax * len(lit)}
	}
	return &litMatcher{lit: lit}
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// requiredLiteral returns a literal every match must contain, whether it is
// case-folded, and whether matching it is the whole pattern.
func requiredLiteral(re *syntax.Regexp) (lit []byte, fold, complete bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []byte(string(re.Rune)), re.Flags&syntax.FoldCase != 0, true
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			l, f, _ := requiredLiteral(s)
			if len(l) > len(lit) {
				lit, fold = l, f
			}
		}
		return lit, fold, false
	}
	return nil, false, false
}

// grep's defaults, in its schema; without a file, absent context and
// max_matches are 0 and [grepAllDefaultM] instead.
const (
	defaultContext    = 3
	defaultMaxMatches = 20
)

func runGrep(c *call, a grepArgs) *tool.Result {
	pattern, ic := a.Pattern, a.IgnoreCase
	ctxLines, hasCtx := defaultContext, a.Context != nil
	if hasCtx {
		ctxLines = *a.Context
	}
	maxM, hasM := defaultMaxMatches, a.MaxMatches != nil
	if hasM {
		maxM = *a.MaxMatches
	}
	all := c.file == ""
	if len(pattern) > MaxPatternBytes {
		return patternTooLong(ToolGrep, len(pattern))
	}
	if pattern == "" {
		return errorResult("invalid_arguments", "pattern must not be empty; use head or slice to read lines.")
	}
	if ctxLines < 0 || maxM < 1 {
		return errorResult("invalid_arguments", "context must be >= 0 and max_matches >= 1.", kv{"context", ctxLines}, kv{"max_matches", maxM})
	}
	if all {
		if !hasM {
			maxM = grepAllDefaultM
		}
		if !hasCtx {
			ctxLines = 0
		}
		return runGrepAll(c, pattern, ic, maxM, ctxLines)
	}
	d, res := c.load()
	if res != nil {
		return res
	}
	m, lit, reErr := compileGrep(pattern, ic, d.data[:min(len(d.data), 256<<10)])
	hits, total, err := grepLines(c.ctx, d, m, maxM)
	if err != nil {
		return c.cancelled(err)
	}
	locate := locator(pattern, ic, lit)
	nLines := d.countLines()
	matches := make([]int, len(hits))
	for i, h := range hits {
		matches[i] = h.line
	}

	// The lines are written up to the size past which an answer cannot
	// fit the per-call cap whatever they hold (bytesPerTokenBound); past
	// it they are only measured, for the too-large answer.
	limit := c.env.maxTokens()
	capBytes := limit * bytesPerTokenBound
	var b strings.Builder
	over := 0 // bytes measured and not written
	if len(matches) > 0 {
		w := len(strconv.Itoa(min(matches[len(matches)-1]+min(ctxLines, nLines), nLines)))
		err := d.contextWalk(c.ctx, hits, ctxLines, func(n int, l []byte, match, gap bool) {
			if over > 0 || b.Len() > capBytes {
				over += shownCost(len(l), w)
				return
			}
			if gap && ctxLines > 0 {
				b.WriteString("--\n")
			}
			writeShownLine(&b, n, w, l, match, locate)
		})
		if err != nil {
			return c.cancelled(err)
		}
	}
	q := "/" + pattern + "/"
	if ic {
		q += "i"
	}
	what := fmt.Sprintf("%s in %s (%s of %s lines", q, c.file, plural(total, "matching line"), Comma(nLines))
	if len(matches) < total {
		what += fmt.Sprintf(", showing first %d", len(matches))
	}
	if ctxLines > 0 && len(matches) > 0 {
		what += fmt.Sprintf(", context %d", ctxLines)
	}
	what += ")"
	if lit {
		what += fmt.Sprintf(" [invalid regex (%s): searched as literal text]", reErr)
	}
	sugg := func() []suggestion {
		s := []suggestion{}
		if ctxLines > 0 {
			s = append(s, suggest("grep", "matching lines only, no context", kv{"file", c.file}, kv{"pattern", pattern}, kv{"context", 0}, kv{"ignore_case", ic}, kv{"max_matches", len(matches)}))
		}
		if len(matches) > 1 {
			s = append(s, suggest("grep", "half the matches", kv{"file", c.file}, kv{"pattern", pattern}, kv{"context", 0}, kv{"ignore_case", ic}, kv{"max_matches", len(matches) / 2}).halving())
		}
		if len(matches) > 0 {
			s = append(s, suggest("slice", "the first match with a little context", kv{"file", c.file}, kv{"start", max(1, matches[0]-2)}, kv{"end", matches[0] + 2}))
		}
		return s
	}
	if over > 0 {
		return c.tooLarge(c.rateEstimate(b.String(), b.Len(), b.Len()+over), kv{"per_call_limit", limit}, sugg)
	}
	return c.finish(b.String(), what, sugg)
}

// hit is a matching line: its 1-based number and byte span (no newline).
type hit struct{ line, start, end int }

// grepLines returns the first maxM matching lines and the total count of
// matching lines (the whole file is scanned). Line numbers come from
// counting newlines between hits, so a cold file needs no line index.
func grepLines(ctx context.Context, d *doc, m matcher, maxM int) ([]hit, int, error) {
	if rm, ok := m.(*reMatcher); ok {
		rm.ctx = ctx
	}
	var out []hit
	total, line, pos := 0, 1, 0
	for from := 0; from < len(d.data); {
		if total&1023 == 1023 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		s, e, ok := m.next(d.data, from)
		if !ok {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
			break
		}
		total++
		if len(out) < maxM {
			line += bytes.Count(d.data[pos:s], []byte{'\n'})
			pos = s
			out = append(out, hit{line, s, e})
		}
		from = e + 1
	}
	return out, total, nil
}

// contextWalk calls line for every line grep shows of d, in order and
// each once: the line of each hit and up to around lines before and after
// it. gap is set on the first line of a window that does not continue the
// line before it. It walks from the hits' bytes over the lines it shows
// and no others, so its work is bounded by those lines (at most the
// file's), never by around, and it holds none of them.
func (d *doc) contextWalk(ctx context.Context, hits []hit, around int, line func(n int, text []byte, match, gap bool)) error {
	data := d.data
	around = min(around, len(data)+1) // more lines than the file has cannot be shown
	last := 0                         // the last line walked
	steps := 0
	step := func() error {
		if steps++; steps&4095 == 0 {
			return ctx.Err()
		}
		return nil
	}
	for i := 0; i < len(hits); {
		h := hits[i]
		// Back to the window's first line: around lines before the hit,
		// never back over a line already walked.
		lo, p := h.line, h.start
		for lo > 1 && lo > h.line-around && lo > last+1 {
			p = bytes.LastIndexByte(data[:p-1], '\n') + 1
			lo--
			if err := step(); err != nil {
				return err
			}
		}
		gap := last > 0 && lo > last+1
		// Forward to around lines past the window's last hit.
		hi := h.line + around
		for n := lo; n <= hi && p < len(data); n++ {
			e := bytes.IndexByte(data[p:], '\n')
			if e < 0 {
				e = len(data)
			} else {
				e += p
			}
			match := i < len(hits) && hits[i].line == n
			if match {
				hi = max(hi, n+around)
				i++
			}
			line(n, bytes.TrimSuffix(data[p:e], []byte{'\r'}), match, gap && n == lo)
			last, p = n, e+1
			if err := step(); err != nil {
				return err
			}
		}
		// A hit past the end of the file cannot be; skip rather than loop.
		for i < len(hits) && hits[i].line <= last {
			i++
		}
	}
	return ctx.Err()
}

// shownCost is how many bytes writeLine writes for a line of n bytes
// numbered in a column width wide: what a grep answer that is not written
// in full would have been.
func shownCost(n, width int) int {
	if n > maxShownLine {
		n = maxShownLine + 40 // the cut, said in the line
	}
	return width + 5 + n
}

// maxShownLine is the longest line grep shows whole; longer lines (minified
// JSON) are cut to a window around the match, and the cut is said in the line.
const maxShownLine = 500

// locator returns where in a line the pattern first matches (0 if unsure);
// only used to centre the window on very long lines.
func locator(pattern string, ic, literal bool) func([]byte) int {
	if literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	if ic {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	return func(l []byte) int {
		if err != nil {
			return 0
		}
		if loc := re.FindIndex(l); loc != nil {
			return loc[0]
		}
		return 0
	}
}

func clipAround(l []byte, pos, n int) []byte {
	lo := max(0, pos-n/4)
	for lo > 0 && !utf8.RuneStart(l[lo]) {
		lo--
	}
	hi := min(len(l), lo+n)
	for hi < len(l) && !utf8.RuneStart(l[hi]) {
		hi--
	}
	var b []byte
	if lo > 0 {
		b = append(b, fmt.Sprintf("…[%s bytes] ", Comma(lo))...)
	}
	b = append(b, l[lo:hi]...)
	if hi < len(l) {
		b = append(b, fmt.Sprintf(" …[+%s bytes]", Comma(len(l)-hi))...)
	}
	return b
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return Comma(n) + " " + unit + "s"
}
