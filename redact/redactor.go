package redact

import (
	"fmt"
	"regexp"
	"sync"
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
// (src is returned with it): over the size bound. Input that looks
// binary (NUL bytes, invalid UTF-8 above 1 byte in 1,000) is scanned
// like any other and [Report].Binary says so. A "blob" value (binary
// resource content, base64) is left as it is and counted in
// [Report].Skipped; the strings around it are scanned.
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
