package tokens

import (
	"fmt"
	"runtime"
	"unicode/utf8"
)

// Counter counts tokens for one encoding. Safe for concurrent use. Get one
// from [ForModel] or [ForEncoding]; the zero value (or a nil *Counter) is
// not meant to be used, and counts as o200k_base rather than panicking.
type Counter struct {
	enc *lazyEncoding
	// gem, when set, counts with Gemma 3 (Gemini) instead of enc.
	gem *lazyGemma
	// anthropic scales the cl100k_base count by 1.1, rounding up, because no
	// public Claude tokenizer exists.
	anthropic bool
}

// Encoding names accepted by [ForEncoding].
const (
	O200kBase  = "o200k_base"
	CL100kBase = "cl100k_base"
	Claude     = "claude"
	Gemma3     = "gemma3"
)

// Encodings lists the names [ForEncoding] accepts.
func Encodings() []string { return []string{O200kBase, CL100kBase, Claude, Gemma3} }

// ForEncoding returns the counter for an encoding name: "o200k_base",
// "cl100k_base", "claude" (cl100k_base × 1.1, rounded up) or "gemma3"
// (Gemma 3's tokenizer, which Gemini models use). An unknown name returns an
// error wrapping [ErrUnknownEncoding].
func ForEncoding(name string) (*Counter, error) {
	switch name {
	case O200kBase:
		return &Counter{enc: o200kBase}, nil
	case CL100kBase:
		return &Counter{enc: cl100kBase}, nil
	case Claude:
		return &Counter{enc: cl100kBase, anthropic: true}, nil
	case Gemma3:
		return &Counter{gem: gemma3}, nil
	}
	return nil, fmt.Errorf("tokens: %w %q (known: %s, %s, %s, %s)", ErrUnknownEncoding, name, O200kBase, CL100kBase, Claude, Gemma3)
}

// Name describes the encoding, e.g. "o200k_base", "gemma3" or
// "cl100k_base*1.1 (anthropic approximation)".
func (c *Counter) Name() string {
	if c.gemma() {
		return Gemma3
	}
	if c.scaled() {
		return c.lazy().name + "*1.1 (anthropic approximation)"
	}
	return c.lazy().name
}

func (c *Counter) lazy() *lazyEncoding {
	if c == nil || c.enc == nil {
		return o200kBase
	}
	return c.enc
}

func (c *Counter) scaled() bool { return c != nil && c.anthropic }

func (c *Counter) gemma() bool { return c != nil && c.gem != nil }

// counter is a loaded vocabulary: an *encoding or the *gemma.
type counter interface {
	// count counts b on up to workers cores (see countChunked).
	count(b []byte, limit int64, workers int) int
	// safe reports whether b may be cut before b[p] (0 < p < len(b))
	// with the counts of the parts adding up to the count of the whole.
	safe(b []byte, p int) bool
}

// load returns the loaded vocabulary, loading it on first use.
func (c *Counter) load() (counter, error) {
	if c.gemma() {
		g, err := c.gem.get()
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	e, err := c.lazy().get()
	if err != nil {
		return nil, err
	}
	return e, nil
}

// Preload starts loading the encoding in the background and returns at once,
// so the first Count does not pay the load (about 40 ms for o200k_base, 60
// ms for gemma3).
func (c *Counter) Preload() {
	goPreload(func() { c.load() })
}

// goPreload runs a background load; a test replaces it to know when the
// loads it started are done (no event of the load says so).
var goPreload = func(load func()) { go load() }

// Count returns the exact token count of b (for the Anthropic counter, the
// scaled cl100k_base count). Ill-formed UTF-8 is counted as the text a UTF-8
// decoder would produce, each maximal ill-formed subsequence becoming U+FFFD.
// Large inputs are counted on all cores. It blocks until the encoding is
// loaded.
func (c *Counter) Count(b []byte) int {
	e, err := c.load()
	if err != nil {
		// Only a corrupt build gets here (the vocabulary is embedded and the
		// tests load it); the byte length is an upper bound that errs toward
		// diverting.
		return c.scale(len(b))
	}
	return c.scale(e.count(b, 0, runtime.GOMAXPROCS(0)))
}

// CountString is Count for a string.
func (c *Counter) CountString(s string) int {
	return c.Count(unsafeBytes(s))
}

// AtLeast reports whether Count(b) >= n, counting no more than it must: an
// input with fewer bytes than n tokens' worth is answered without counting
// (BPE never yields more tokens than bytes), and counting stops as soon as n
// is reached.
func (c *Counter) AtLeast(b []byte, n int) bool {
	if n <= 0 {
		return true
	}
	if c.scale(len(b)) < n && utf8.Valid(b) {
		return false
	}
	// Ill-formed bytes become 3-byte U+FFFD, so only that bound is sure.
	if c.scale(3*len(b)) < n {
		return false
	}
	e, err := c.load()
	if err != nil {
		return true
	}
	need := int64(n)
	if c.scaled() {
		// Smallest m with ceil(1.1*m) >= n.
		need = (10*int64(n)-10)/11 + 1
	}
	return int64(e.count(b, need, runtime.GOMAXPROCS(0))) >= need
}

// scale applies the Anthropic factor: ceil(n × 1.1) in integers.
func (c *Counter) scale(n int) int {
	if c.scaled() {
		return (n*11 + 9) / 10
	}
	return n
}
