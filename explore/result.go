package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// call is one tool invocation in progress.
type call struct {
	ctx  context.Context
	env  *Env
	tool string
	file string
	// errs are problems between arguments (pattern with path, order
	// without sort_by), answered by argErr.
	errs []string
	doc  *doc // the file, once loaded
	// estimate, when not "", says how the too-large count was estimated
	// rather than counted ([tokensOf], [call.sizeEstimate]); its message
	// then says so.
	estimate string
	// notes are what the footer says about fields whose numbers arrived
	// as text (numtext.go).
	notes []numNote
}

// kv and obj build JSON objects whose key order is part of the contract
// (error first, suggestions last).
type kv struct {
	K string
	V any
}

type obj []kv

func (o obj) MarshalJSON() ([]byte, error) {
	return tool.MarshalOrdered(len(o), func(i int) (string, any) { return o[i].K, o[i].V })
}

// suggestion is a complete, ready-to-run tool call.
type suggestion struct {
	Tool      string `json:"tool"`
	Arguments obj    `json:"arguments"`
	Why       string `json:"why,omitempty"`
	// share is, for a narrower retry of the call that was too large, about
	// what part of its result this one returns (0: unknown): a retry that
	// cannot fit by that measure is resized before it is tried out.
	share float64
}

// halving marks s as a retry returning about half of what was too large.
func (s suggestion) halving() suggestion {
	s.share = 0.5
	return s
}

func suggest(tool, why string, args ...kv) suggestion {
	return suggestion{Tool: tool, Arguments: obj(args), Why: why}
}

// textResult is a successful result. Internals pass results by pointer so
// that nil can mean "no error yet"; [Call] returns the value.
func textResult(s string) *tool.Result {
	r := tool.Text(s)
	return &r
}

// errorResult is the structured tool error the model can act on: a
// successful tool result holding one JSON object.
func errorResult(code, msg string, extra ...kv) *tool.Result {
	o := append(obj{{"error", code}, {"message", msg}}, extra...)
	b, err := tool.MarshalNoEscape(o)
	if err != nil {
		b = []byte(`{"error":"internal_error","message":"could not encode error"}`)
	}
	return textResult(string(b))
}

// fileError maps a load error to its structured error.
func (c *call) fileError(err error) *tool.Result {
	f := kv{"file", c.file}
	switch {
	case errors.Is(err, ErrOutsideRoot):
		return errorResult("file_outside_root", fmt.Sprintf("%q is outside the read root: absolute paths, '..' escapes and symlinks leaving the root are refused. Use a stored output's name as given in the pointer, or a relative path under the read root.", c.file), f)
	case errors.Is(err, ErrInvalidName):
		return errorResult("invalid_file_name", "file must be a non-empty name without NUL bytes.", f)
	case errors.Is(err, ErrNotFound):
		return errorResult("file_not_found", fmt.Sprintf("no file %q under the read root. Use the file name exactly as given in the pointer of the intercepted output.", c.file), f)
	case errors.Is(err, ErrNotRegular):
		return errorResult("not_a_regular_file", fmt.Sprintf("%q is a directory or special file, not a stored output.", c.file), f)
	case errors.Is(err, ErrNoRoot):
		return errorResult("no_read_root", "this session has no read root (or no token counter) configured; exploration tools are unavailable.")
	case errors.Is(err, ErrIO):
		return errorResult("io_error", fmt.Sprintf("could not read %q: %v. The file exists; retrying may help.", c.file, err), f)
	}
	return errorResult("internal_error", err.Error(), f)
}

// load reads the call's file or returns the error result to send.
func (c *call) load() (*doc, *tool.Result) {
	d, err := load(c.env, c.file)
	if err != nil {
		return nil, c.fileError(err)
	}
	c.doc = d
	return d, nil
}

// loadJSON is load for the JSON path tools: the file must be JSON or NDJSON.
func (c *call) loadJSON() (*doc, *tool.Result) {
	d, res := c.load()
	if res != nil {
		return nil, res
	}
	if d.kind == kindCSV || d.kind == kindTSV {
		return d.csvView(), nil
	}
	if d.kind != kindJSON && d.kind != kindNDJSON {
		return nil, errorResult("not_json",
			fmt.Sprintf("%q is a %s file, not JSON, so JSON paths do not apply. Use schema for its shape, grep to find lines, head or slice to read lines.", c.file, d.kind),
			kv{"file", c.file}, kv{"kind", strings.ToLower(d.kind.String())},
			kv{"suggestions", []suggestion{
				suggest("schema", "shape of the file", kv{"file", c.file}),
				suggest("head", "first lines", kv{"file", c.file}, kv{"lines", 50}),
			}})
	}
	if d.jsonErr != "" {
		return nil, c.invalidJSON(d, d.jsonErr, d.lineOfErr())
	}
	return d, nil
}

func (d *doc) lineOfErr() int {
	// jsonErr starts with "line N,".
	var n int
	fmt.Sscanf(d.jsonErr, "line %d,", &n)
	return n
}

func (c *call) invalidJSON(d *doc, where string, line int) *tool.Result {
	start := max(1, line-5)
	end := max(start, min(d.lineCount(), line+5))
	return errorResult("invalid_json",
		fmt.Sprintf("%q is not valid JSON (%s). The text tools still work on it.", c.file, where),
		kv{"file", c.file},
		kv{"suggestions", []suggestion{
			suggest("slice", "the lines around the error", kv{"file", c.file}, kv{"start", start}, kv{"end", end}),
			suggest("schema", "what the file looks like as text", kv{"file", c.file}),
		}})
}

// cancelled is the result when the client gave up while a scan ran, or
// the call's context ended for another reason, which its cause says (the
// server's time bound of one call).
func (c *call) cancelled(err error) *tool.Result {
	if cause := context.Cause(c.ctx); cause != nil {
		err = cause
	}
	return errorResult("cancelled", fmt.Sprintf("%s stopped before finishing: %v.", c.tool, err))
}

// parsePathArg parses the path argument or returns the invalid_path error,
// which names the column.
func (c *call) parsePathArg(p string) (*fquery, *tool.Result) {
	q, err := parsePath(p)
	if err != nil {
		col := 1
		msg := err.Error()
		var se *syntaxError
		if errors.As(err, &se) {
			col, msg = se.column(), se.msg
		}
		extra := []kv{{"path", p}, {"column", col}}
		if fixed := fixPath(p); fixed != "" {
			msg += fmt.Sprintf("; corrected: %s", fixed)
			extra = append(extra, kv{"corrected_path", fixed})
		}
		return nil, errorResult("invalid_path", fmt.Sprintf("path does not parse at column %d: %s. Paths are JSONPath (RFC 9535): $.items[3].metadata.name, $.items[*].id, $..children[?@.type == 'file'], $.a['b c'], $[-3:]; or dotted: items.3.metadata.name.", col, msg),
			append(extra, kv{"suggestions", []suggestion{suggest("schema", "see the key tree and valid paths", kv{"file", c.file})}})...)
	}
	return q, nil
}

// notFound builds key_path_not_found: the failed segment, the valid prefix,
// what is there instead, and schema as the first suggestion.
func (c *call) notFound(d *doc, path string, m *pathMiss) *tool.Result {
	if m.badRec >= 0 {
		ln := d.lineOf(d.records[m.badRec].start)
		return c.invalidJSON(d, fmt.Sprintf("record %d on line %d does not parse", m.badRec, ln), ln)
	}
	found := obj{{"type", d.typeOf(m.at)}}
	var msg string
	sugg := []suggestion{suggest("schema", "the key tree with types and valid paths", kv{"file", c.file})}
	switch t := d.typeOf(m.at); t {
	case "object":
		keys := objectKeys(d, m.at)
		shown := keys
		if len(shown) > 50 {
			shown = shown[:50]
		}
		found = append(found, kv{"key_count", len(keys)}, kv{"available_keys", shown})
		msg = fmt.Sprintf("%s has no key %s; it is an object with %d keys.", m.prefix, strings.TrimPrefix(m.failed, "."), len(keys))
		if len(keys) > 0 {
			if best := closestKey(strings.TrimPrefix(strings.Trim(m.failed, `[]"`), "."), keys); best != "" {
				sugg = append(sugg, suggest("get_in", "closest existing key", kv{"file", c.file}, kv{"path", m.prefix + renderKey(best)}))
			}
		}
	case "array":
		n := d.length(m.at)
		found = append(found, kv{"length", n})
		if strings.HasPrefix(m.failed, "[") && !strings.HasPrefix(m.failed, `["`) {
			msg = fmt.Sprintf("%s is an array of %d items; index %s is out of range (valid: 0..%d, or negative from the end).", m.prefix, n, strings.Trim(m.failed, "[]"), n-1)
		} else {
			msg = fmt.Sprintf("%s is an array of %d items, not an object; use an index such as %s[0].", m.prefix, n, m.prefix)
		}
		if n > 0 {
			sugg = append(sugg, suggest("item_schema", "keys of its items", kv{"file", c.file}, kv{"path", m.prefix}, kv{"offset", 0}, kv{"limit", min(n, 100)}))
		}
	default:
		found = append(found, kv{"value_preview", preview(d.data[m.at.v.start:m.at.v.end], 80)})
		msg = fmt.Sprintf("%s is %s, so %s cannot be applied to it.", m.prefix, article(t), m.failed)
	}
	if m.prefix != "$" {
		sugg = append(sugg, suggest("get_in", "the deepest value that exists", kv{"file", c.file}, kv{"path", m.prefix}, kv{"offset", 0}, kv{"limit", 20}))
	}
	return errorResult("key_path_not_found", msg,
		kv{"path", path}, kv{"failed_segment", m.failed}, kv{"valid_prefix", m.prefix},
		kv{"found", found}, kv{"suggestions", sugg})
}

func objectKeys(d *doc, n node) []string {
	var keys []string
	for _, c := range d.members(n) {
		keys = append(keys, keyString(d.data, c.key))
	}
	return keys
}

// closestKey returns the key with the smallest case-insensitive edit
// distance to want, if it is close enough to be a plausible typo.
func closestKey(want string, keys []string) string {
	best, bd := "", math.MaxInt
	lw := strings.ToLower(want)
	for i, k := range keys {
		if i > 2000 {
			break
		}
		if dd := editDistance(lw, strings.ToLower(k)); dd < bd {
			best, bd = k, dd
		}
	}
	if bd <= max(2, len(want)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt / 2
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func preview(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// bytesPerTokenBound: a result longer than cap*bytesPerTokenBound bytes is
// refused without running the exact counter on it (which would cost seconds
// on a 100 MB value); real tokenizers average 3-5 bytes per token.
const bytesPerTokenBound = 32

// finish appends the footer, enforces the per-call cap and the budget, and
// charges the budget. sugg builds the suggestions of <tool>_too_large.
func (c *call) finish(body, what string, sugg func() []suggestion) *tool.Result {
	limit := c.env.maxTokens()
	if len(body) > limit*bytesPerTokenBound {
		return c.tooLarge(tokensOf(c, body), kv{"per_call_limit", limit}, sugg)
	}
	b := c.env.Budget
	total, rem := 0, 0
	if b != nil {
		total, rem = b.Total(), b.Remaining()
	}
	text := func(n, left int) string {
		var f string
		if b != nil {
			f = fmt.Sprintf("--- %s: %s | ~%s tokens, ~%s left of %s ---", c.tool, what, Comma(n), Comma(max(left, 0)), Comma(total))
		} else {
			f = fmt.Sprintf("--- %s: %s | ~%s tokens (per-call cap %s) ---", c.tool, what, Comma(n), Comma(limit))
		}
		if body == "" {
			return f
		}
		if strings.HasSuffix(body, "\n") {
			return body + f
		}
		return body + "\n" + f
	}
	// The footer states its own token count: iterate to a fixed point (two
	// rounds in practice, since only a few digits change).
	n := c.env.Count(text(0, rem))
	for range 3 {
		m := c.env.Count(text(n, rem-n))
		if m == n {
			break
		}
		n = max(n, m)
	}
	if n > limit {
		return c.tooLarge(n, kv{"per_call_limit", limit}, sugg)
	}
	if b == nil {
		return textResult(text(n, 0))
	}
	left, ok := b.TryCharge(n)
	if !ok {
		return c.tooLarge(n, kv{"remaining_budget_tokens", b.Remaining()}, sugg)
	}
	r := textResult(text(n, left))
	r.Charged = n
	return r
}

// exactCountBytes: a too-large text up to this size is counted exactly (the
// counter runs at over 100 MB/s, so a fraction of a second); a longer one is
// estimated from [countSamples] slices of [sampleBytes] spread over it, and
// its message says so.
const (
	exactCountBytes = 32 << 20
	countSamples    = 64
	sampleBytes     = 64 << 10
)

// tokensOf counts s for a too-large answer: exactly up to exactCountBytes,
// else scaled from evenly spread samples (setting c.sampled). The footer of
// the result that was refused would add a few tokens more; the count is the
// content's, which alone is over the limit.
func tokensOf[T string | []byte](c *call, s T) int {
	if len(s) <= exactCountBytes {
		return c.env.Count(string(s))
	}
	c.estimate = fmt.Sprintf("estimated from %d samples of %d KB", countSamples, sampleBytes>>10)
	step := len(s) / countSamples
	n := 0
	for i := range countSamples {
		n += c.env.Count(string(s[i*step : i*step+sampleBytes]))
	}
	return int(float64(n) * float64(len(s)) / float64(countSamples*sampleBytes))
}

// sizeEstimate is the too-large count of a result with nothing of it
// rendered to measure: ~4 bytes per token, said as such in the message.
func (c *call) sizeEstimate(bytes int) int {
	c.estimate = "estimated from its size at 4 bytes per token"
	return bytes / 4
}

// estimateSample bounds the part of a too-large result rendered to measure
// its token rate ([call.rateEstimate]).
const estimateSample = 256 << 10

// rateEstimate is the too-large count of a result not built whole (it was
// cut off past the cap): sample is the start of it as it would be written
// and sampleOf the bytes of the source that sample renders, total the
// whole result's size in those source bytes; the sample's tokens per
// source byte, scaled to total. The message says it is an estimate and
// what it was measured on. Bytes/4 was 20–50% low on logs and indented
// JSON (issue 38); a rate measured on the result's own rendering is
// within a few percent on homogeneous data.
func (c *call) rateEstimate(sample string, sampleOf, total int) int {
	if sample == "" || sampleOf <= 0 {
		return c.sizeEstimate(total)
	}
	n := tokensOf(c, sample)
	if sampleOf >= total {
		return n
	}
	c.estimate = fmt.Sprintf("estimated from its first %s KB at their token rate", Comma(max(1, sampleOf>>10)))
	return int(float64(n) * float64(total) / float64(sampleOf))
}

func (c *call) tooLarge(est int, lim kv, sugg func() []suggestion) *tool.Result {
	var msg string
	fits := c.fitting(sugg(), est, lim.V.(int))
	count := Comma(est) + " tokens"
	if c.estimate != "" {
		count = fmt.Sprintf("~%s tokens (%s)", Comma(est), c.estimate)
	}
	if lim.K == "per_call_limit" {
		msg = fmt.Sprintf("The %s result would be %s, over the per-call limit of %s. None of it was returned; only this message was (and charged). run one of the suggestions.", c.tool, count, Comma(lim.V.(int)))
	} else {
		msg = fmt.Sprintf("The %s result would be %s, but only %s tokens of the context budget are left. None of it was returned; only this message was (and charged). run a narrower call.", c.tool, count, Comma(lim.V.(int)))
	}
	if len(fits) == 0 && !c.env.probing {
		// Every suggestion was tried out and none fits.
		msg = strings.TrimSuffix(strings.TrimSuffix(msg, " run one of the suggestions."), " run a narrower call.") +
			" no narrower call of these tools fits either: the limit is smaller than any part of this output."
	}
	r := errorResult(c.tool+"_too_large", msg, kv{"estimated_tokens", est}, lim, kv{"suggestions", fits})
	if lim.K == "remaining_budget_tokens" {
		r.Refused = tool.RefusedBudget
	}
	return r
}

// Comma formats n with thousands separators (-1,234,567), as the tools'
// answers and package appview's write counts.
func Comma(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// window clamps offset/limit to a sequence of n items; hasLimit false means
// "to the end". It returns the half-open [lo, hi).
func window(n, offset, limit int, hasLimit bool) (int, int) {
	lo := min(max(offset, 0), n)
	hi := n
	if hasLimit && limit < n-lo {
		hi = lo + max(limit, 0)
	}
	return lo, hi
}

// windowText renders "items [3..7) of 120 total", or "120 items" for a
// full scan.
func windowText(unit string, lo, hi, n int, full bool) string {
	if full {
		if n == 1 {
			return "1 " + strings.TrimSuffix(unit, "s")
		}
		return Comma(n) + " " + unit
	}
	return fmt.Sprintf("%s [%d..%d) of %s total", unit, lo, hi, Comma(n))
}

func sortedKeys(m map[string]int) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
