package redact

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"unicode/utf8"
)

// Mode is what a [Redactor] does with the secrets it finds.
type Mode string

// Modes ([redaction] mode).
const (
	Mask Mode = "mask" // replaced by [REDACTED:kind:fp] (the default)
	Flag Mode = "flag" // kept; the [Report] says where
	Off  Mode = "off"  // not scanned
)

// Defaults of [Options].
const (
	// DefaultMaxBytes is the largest input scanned: the proxy's default
	// max_result_bytes, so that every result it accepts is scanned.
	DefaultMaxBytes = 512 << 20
	// DefaultMaxFindings bounds [Report].Findings (not the detection).
	DefaultMaxFindings = 100
)

// maxGrow bounds the window a match is looked for in (raw bytes after
// its keyword): a secret longer than that is masked up to there.
const maxGrow = 1 << 20

// maxUnkeyed is the longest match of an extra pattern without keywords:
// such a pattern is run over overlapping spans of the text.
const maxUnkeyed = 1 << 10

// binaryRate: an input with more than one invalid UTF-8 byte in this many
// is taken for binary (a NUL byte anywhere is too).
const binaryRate = 1000

// Options configure [New]. The zero value masks with the default rules.
type Options struct {
	Mode    Mode      // "" is [Mask]
	Extra   []Pattern // extra rules ([redaction] extra_patterns)
	Allow   []string  // regexps: a secret one of them matches is kept
	Entropy bool      // also the generic entropy-based rules (false positives)
	// Key is the fingerprints' HMAC key; nil: a random key per process.
	Key []byte
	// MaxBytes is the largest input scanned (0: [DefaultMaxBytes]); a
	// bigger one returns [ErrUnscannable].
	MaxBytes int
	// MaxFindings bounds [Report].Findings (0: [DefaultMaxFindings]).
	MaxFindings int
}

// rule is a compiled [ruleSpec].
type rule struct {
	id        string
	re        *regexp.Regexp
	group     int
	back, fwd int
	entropy   float64
	allow     []*regexp.Regexp
	pre       func([]byte, int) bool
	// anchored is re after ^(?s:.){0,lead}?: it only looks for a match
	// starting within lead bytes of where its text starts, so a keyword's
	// window costs what its match is long, not what the window is. nil
	// for rules whose back reach is too long for it.
	anchored       *regexp.Regexp
	match          func([]byte, int) []int // instead of anchored
	lead           int
	keyless        bool // an extra pattern without keywords: run everywhere
	keywordInMatch bool // a kept match must contain its keyword
}

// Redactor finds secrets in JSON or text and masks or flags them. It is
// safe for concurrent use; make one with [New] at start-up and derive
// per-server modes with [Redactor.With].
type Redactor struct {
	*rules
	mode Mode
}

// rules is what every mode of one configuration shares.
type rules struct {
	list        []rule
	anchors     anchorSet
	keyless     []int
	allow       []*regexp.Regexp
	key         []byte
	maxBytes    int
	maxFindings int
	maxBack     int // raw bytes a match may start before its keyword (or its keyword-less window)
	maxKw       int // the longest keyword
	pool        sync.Pool
}

// maskRe keeps masks: scanning masked text again changes nothing.
var maskRe = regexp.MustCompile(`\[REDACTED:[a-z0-9-]{1,40}:[0-9a-f]{4}\]`)

// New compiles the default rules (the generic ones with o.Entropy) and
// o's extra and allow patterns. A bad pattern is an error wrapping
// [ErrPattern] that names it.
func New(o Options) (*Redactor, error) {
	switch o.Mode {
	case "":
		o.Mode = Mask
	case Mask, Flag, Off:
	default:
		return nil, fmt.Errorf("redact: mode %q: want %q, %q or %q", o.Mode, Mask, Flag, Off)
	}
	rs := &rules{key: o.Key, maxBytes: o.MaxBytes, maxFindings: o.MaxFindings}
	if rs.key == nil {
		rs.key = processKey
	}
	if rs.maxBytes <= 0 {
		rs.maxBytes = DefaultMaxBytes
	}
	if rs.maxFindings <= 0 {
		rs.maxFindings = DefaultMaxFindings
	}
	for _, s := range defaultRules {
		if s.Generic && !o.Entropy {
			continue
		}
		r := rule{id: s.ID, re: regexp.MustCompile(s.Regex), group: s.Group, back: 2 * s.Back, fwd: 2 * s.Fwd, entropy: s.Entropy, keywordInMatch: true}
		for _, a := range s.Allow {
			r.allow = append(r.allow, regexp.MustCompile(a))
		}
		r.pre = s.Pre
		r.anchor(s.Regex)
		r.match = s.Match
		rs.add(r, s.Keywords)
	}
	for i, p := range o.Extra {
		if err := CheckID(p.ID); err != nil {
			return nil, fmt.Errorf("redact: extra pattern %d: %w", i, err)
		}
		re, err := CompilePattern(p.Regex)
		if err != nil {
			return nil, fmt.Errorf("redact: extra pattern %q (%s): %w", p.ID, p.Regex, err)
		}
		r := rule{id: p.ID, re: re, back: maxUnkeyed, fwd: maxUnkeyed}
		if re.NumSubexp() > 0 {
			r.group = 1
		}
		kws := p.Keywords
		if len(kws) == 0 {
			if pre, _ := re.LiteralPrefix(); len(pre) >= 3 {
				kws = []string{pre}
				r.back = 0
				r.anchor(p.Regex)
			}
		}
		for _, k := range kws {
			if k == "" {
				return nil, fmt.Errorf("redact: extra pattern %q: %w: an empty keyword", p.ID, ErrPattern)
			}
		}
		if len(kws) == 0 {
			r.keyless = true
		} else {
			r.keywordInMatch = true
		}
		rs.add(r, kws)
	}
	for _, a := range o.Allow {
		re, err := CompilePattern(a)
		if err != nil {
			return nil, fmt.Errorf("redact: allow pattern %q: %w", a, err)
		}
		rs.allow = append(rs.allow, re)
	}
	rs.pool.New = func() any { return &state{fp: newFingerprinter(rs.key), lastEnd: make([]int, len(rs.list))} }
	return &Redactor{rules: rs, mode: o.Mode}, nil
}

// anchor sets r.anchored: re behind a lead of back bytes and one more (the
// byte before a keyword, which \b looks at).
func (r *rule) anchor(re string) {
	r.lead = r.back + 1
	if r.lead > 1000 { // RE2's largest repeat count
		return
	}
	// The pattern is group 1, so that its match is told from the lead's.
	r.anchored, _ = regexp.Compile(fmt.Sprintf(`^(?s:.){0,%d}?(%s)`, r.lead, re))
}

func (rs *rules) add(r rule, keywords []string) {
	i := len(rs.list)
	rs.list = append(rs.list, r)
	rs.maxBack = max(rs.maxBack, r.back, r.lead)
	if r.keyless {
		rs.keyless = append(rs.keyless, i)
		rs.maxBack = max(rs.maxBack, maxUnkeyed)
		return
	}
	for _, k := range keywords {
		rs.anchors.add(k, i)
		rs.maxKw = max(rs.maxKw, len(k))
	}
}

// With is r in mode m (a server's own redaction setting), sharing r's
// compiled rules.
func (r *Redactor) With(m Mode) *Redactor {
	if m == "" || m == r.mode {
		return r
	}
	return &Redactor{rules: r.rules, mode: m}
}

// Mode is r's mode.
func (r *Redactor) Mode() Mode { return r.mode }

// JSON scans src, JSON text (a tools/call result as it came), for secrets
// in its strings. In [Mask] mode the masked text is appended to dst and
// returned, valid JSON when src is; when nothing is masked (and in [Flag]
// and [Off] modes) src itself is returned, nothing copied or allocated.
// The error is an [*UnscannableError] for input that was not scanned
// (src is returned with it): over the size bound, binary (NUL bytes, or
// invalid UTF-8 above 1 byte in 1,000), or holding a base64 "blob"
// (binary resource content, which no rule can read).
func (r *Redactor) JSON(dst, src []byte) ([]byte, Report, error) { return r.scan(dst, src, true) }

// Text is [Redactor.JSON] for plain text (a pad write, a note): no JSON
// escapes are decoded and a mask may go anywhere.
func (r *Redactor) Text(dst, src []byte) ([]byte, Report, error) { return r.scan(dst, src, false) }

// String is [Redactor.Text] on a string.
func (r *Redactor) String(s string) (string, Report, error) {
	out, rep, err := r.Text(nil, []byte(s))
	if rep.Total == 0 || r.mode != Mask {
		return s, rep, err
	}
	return string(out), rep, err
}

// state is one scan's scratch space, pooled.
type state struct {
	hits    []hit
	spans   []span
	buf     []byte
	at      []int32
	fp      fingerprinter
	lastEnd []int // per rule: the raw end of its last match
	str     strState

	// Output.
	out     []byte
	copied  int  // src is copied to out up to here
	done    int  // the end of the last span reported
	masked  bool // out holds something
	open    span // the merged span not emitted yet
	hasOpen bool
	rep     Report
}

// span is a secret found at src[start:end].
type span struct {
	start, end int
	rule       int
	fp         [4]byte
}

func (r *Redactor) scan(dst, src []byte, isJSON bool) ([]byte, Report, error) {
	if r.mode == Off {
		return src, Report{}, nil
	}
	if len(src) > r.maxBytes {
		return src, Report{}, &UnscannableError{Reason: fmt.Sprintf("%d bytes, over the scan bound of %d", len(src), r.maxBytes)}
	}
	st := r.pool.Get().(*state)
	st.out, st.copied, st.done, st.masked, st.hasOpen, st.rep = dst, 0, 0, false, false, Report{}
	for i := range st.lastEnd {
		st.lastEnd[i] = -1
	}
	st.spans = st.spans[:0]
	st.str = strState{}
	// What makes the input unscannable is looked for chunk by chunk too,
	// while the chunk is in cache.
	nul, blob, bad, valid := false, false, 0, 0
	for from := 0; from < len(src); from += chunk {
		to := min(from+chunk, len(src))
		if !nul && bytes.IndexByte(src[from:to], 0) >= 0 {
			nul = true
		}
		end := to // UTF-8 is checked up to the last character that begins in the chunk
		for k := 0; k < 3 && end < len(src) && end > valid && !utf8.RuneStart(src[end]); k++ {
			end--
		}
		if !utf8.Valid(src[valid:end]) {
			bad += invalidUTF8(src[valid:end])
		}
		valid = end
		if isJSON && !blob {
			blob = hasBlob(src[max(0, from-len(`"blob"`)):min(len(src), to+32)])
		}
		st.hits = r.anchors.find(st.hits[:0], src, from, to)
		if len(st.hits) > 1 {
			slices.SortFunc(st.hits, func(a, b hit) int { return a.pos - b.pos })
		}
		for _, h := range st.hits {
			for _, ri := range h.kw.rules {
				r.window(st, src, ri, h.pos, len(h.kw.lit), isJSON)
			}
		}
		for _, ri := range r.keyless {
			r.keylessWindow(st, src, ri, from, to, isJSON)
		}
		if len(st.spans) > 0 {
			// Spans starting before this can no longer be joined by one
			// found later: later keywords end past to.
			r.flush(st, src, to-r.maxBack-r.maxKw-1)
		}
	}
	r.flush(st, src, len(src)+1)
	r.emitOpen(st, src)
	var err error
	switch {
	case nul:
		err = &UnscannableError{Reason: fmt.Sprintf("binary: %d NUL bytes", bytes.Count(src, []byte{0}))}
	case bad*binaryRate > len(src):
		err = &UnscannableError{Reason: fmt.Sprintf("binary: %d bytes of invalid UTF-8 in %d", bad, len(src))}
	case blob:
		err = &UnscannableError{Reason: `a base64 "blob" (binary resource content) cannot be scanned`}
	}
	if err != nil {
		st.out, st.rep = nil, Report{}
		r.pool.Put(st)
		return src, Report{}, err
	}
	rep := st.rep
	out := src
	if st.masked {
		out = append(st.out, src[st.copied:]...)
	}
	st.out, st.rep = nil, Report{}
	r.pool.Put(st)
	return out, rep, nil
}

// invalidUTF8 counts the bytes of b that are not part of a valid UTF-8
// encoding.
func invalidUTF8(b []byte) int {
	bad := 0
	for i := 0; i < len(b); {
		c, w := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && w == 1 {
			bad++
		}
		i += w
	}
	return bad
}

// hasBlob reports whether src has a "blob" key: the base64 content of a
// binary resource.
func hasBlob(src []byte) bool {
	key := []byte(`"blob"`)
	for i := 0; ; {
		j := bytes.Index(src[i:], key)
		if j < 0 {
			return false
		}
		i += j + len(key)
		rest := bytes.TrimLeft(src[i:min(i+16, len(src))], " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			return true
		}
	}
}

// window runs rule ri on the text around a keyword found at raw offset
// kw (klen bytes) and records what it finds.
func (r *Redactor) window(st *state, src []byte, ri, kw, klen int, isJSON bool) {
	ru := &r.list[ri]
	if kw < st.lastEnd[ri] {
		return // inside its last match
	}
	if ru.pre != nil && !ru.pre(src, kw) {
		return
	}
	back := ru.back
	if ru.anchored != nil {
		back = ru.lead
	}
	ws := max(0, kw-back)
	if isJSON {
		if q := quoteBefore(src, ws, kw); q >= 0 {
			ws = q + 1
		} else {
			ws = alignStart(src, ws)
		}
	}
	for fwd := ru.fwd; ; fwd *= 4 {
		we := min(len(src), kw+klen+fwd)
		cut := we < len(src) && fwd < maxGrow // the match may go on
		if isJSON {
			if q := quoteAfter(src, kw, we); q >= 0 {
				we, cut = q, false
			}
		}
		if !r.run(st, src, ri, ws, we, kw, klen, isJSON, cut) {
			return
		}
	}
}

// keylessWindow runs a keyword-less extra rule over src[from:to] (and
// maxUnkeyed bytes on either side, so that a match starting in it is seen
// whole).
func (r *Redactor) keylessWindow(st *state, src []byte, ri, from, to int, isJSON bool) {
	ws, we := max(0, from-maxUnkeyed), min(len(src), to+maxUnkeyed)
	if isJSON {
		ws = alignStart(src, ws)
	}
	r.run(st, src, ri, ws, we, -1, 0, isJSON, false)
}

// run matches rule ri on src[ws:we] (decoded in JSON). kw ≥ 0 keeps only
// matches around the keyword at kw; kw < 0 keeps matches starting before
// we-maxUnkeyed (the rest are seen by the next window). With cut (the
// window ends before the text does) a match reaching the window's end
// may be longer: run records nothing and returns true, for a longer
// window.
func (r *Redactor) run(st *state, src []byte, ri, ws, we, kw, klen int, isJSON, cut bool) (more bool) {
	ru := &r.list[ri]
	text := src[ws:we]
	var at []int32
	if isJSON && bytes.IndexByte(text, '\\') >= 0 {
		st.buf, st.at = decodeWindow(st.buf[:0], st.at[:0], text, ws)
		text, at = st.buf, st.at
	}
	raw := func(i int) int { // decoded offset to raw offset
		if at == nil {
			return ws + i
		}
		return int(at[i])
	}
	covers := func(m []int) bool {
		ms, me := raw(m[0]), raw(m[1])
		return !(kw >= 0 && ru.keywordInMatch && (ms >= kw+klen || me <= kw))
	}
	var ms [][]int
	if ru.anchored != nil && kw >= 0 {
		// The leftmost match within the lead (group 1 onwards is the
		// pattern's own match and groups); when it is another keyword's,
		// all of them, as without the anchor (rare: two within a lead).
		var m []int
		if ru.match != nil {
			m = ru.match(text, ru.lead)
		} else if m = ru.anchored.FindSubmatchIndex(text); m != nil {
			m = m[2:]
		}
		if m != nil {
			if covers(m) {
				ms = [][]int{m}
			} else {
				ms = ru.re.FindAllSubmatchIndex(text, -1)
			}
		}
	} else {
		ms = ru.re.FindAllSubmatchIndex(text, -1)
	}
	if cut {
		for _, m := range ms {
			if m[1] == len(text) && covers(m) {
				return true
			}
		}
	}
	for _, m := range ms {
		if !covers(m) {
			continue
		}
		if kw < 0 && raw(m[0]) >= we-maxUnkeyed && we < len(src) {
			continue
		}
		gs, ge := m[0], m[1]
		if ru.group > 0 {
			gs, ge = m[2*ru.group], m[2*ru.group+1]
			if gs < 0 || gs == ge {
				continue
			}
		}
		secret := text[gs:ge]
		rs, re := raw(gs), raw(ge)
		if !r.keep(st, src, ru, secret, rs, re, isJSON) {
			continue
		}
		st.lastEnd[ri] = max(st.lastEnd[ri], re)
		st.spans = append(st.spans, span{start: rs, end: re, rule: ri, fp: st.fp.sum(secret)})
	}
	return false
}

// keep reports whether a match is a secret to report: entropy enough,
// not allowed, not a mask, and (JSON) inside a string without an
// unescaped quote.
func (r *Redactor) keep(st *state, src []byte, ru *rule, secret []byte, rs, re int, isJSON bool) bool {
	if ru.entropy > 0 && entropy(secret) < ru.entropy {
		return false
	}
	if bytes.Contains(secret, []byte(maskPrefix)) && maskRe.Match(secret) {
		return false
	}
	for _, a := range ru.allow {
		if a.Match(secret) {
			return false
		}
	}
	for _, a := range r.allow {
		if a.Match(secret) {
			return false
		}
	}
	if isJSON {
		if quoteAfter(src, rs, re) >= 0 {
			return false // crosses a string's end (a keyword-less pattern)
		}
		if structural(src[rs:re]) && !st.str.inString(src, rs) {
			return false
		}
	}
	return true
}

// flush emits, in order, the spans starting before limit, merging the
// ones that overlap.
func (r *Redactor) flush(st *state, src []byte, limit int) {
	if len(st.spans) == 0 {
		return
	}
	slices.SortFunc(st.spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return b.end - a.end
	})
	n := 0
	for _, s := range st.spans {
		if s.start >= limit {
			break
		}
		n++
		if st.hasOpen && s.start < st.open.end {
			st.open.end = max(st.open.end, s.end)
			continue
		}
		r.emitOpen(st, src)
		st.open, st.hasOpen = s, true
	}
	st.spans = append(st.spans[:0], st.spans[n:]...)
}

// emitOpen reports the open span and, in mask mode, writes it out.
func (r *Redactor) emitOpen(st *state, src []byte) {
	if !st.hasOpen {
		return
	}
	s := st.open
	st.hasOpen = false
	if s.start < st.done { // joins one already reported: only the rest
		if s.end <= st.done {
			return
		}
		s.start = st.done
	}
	st.done = s.end
	kind := r.list[s.rule].id
	rep := &st.rep
	if rep.Counts == nil {
		rep.Counts = map[string]int{}
	}
	rep.Counts[kind]++
	rep.Total++
	if len(rep.Findings) < r.maxFindings {
		rep.Findings = append(rep.Findings, Finding{Kind: kind, Start: s.start, End: s.end, Fingerprint: string(s.fp[:])})
	} else {
		rep.More++
	}
	if r.mode != Mask {
		return
	}
	st.out = append(st.out, src[st.copied:s.start]...)
	st.out = appendMask(st.out, kind, s.fp)
	st.copied, st.masked = s.end, true
}
