package pad

import (
	"fmt"
	"strings"
	"time"
)

// Section declares one part of a Markdown pad: its heading, its cap in
// characters (runes; 0 means no cap) and the purpose shown to the model in
// the contract.
// A Numbered section holds a checklist ("N. [ ] item") that the check
// operation ticks.
type Section struct {
	Name     string `json:"name"`
	Cap      int    `json:"cap"`
	Purpose  string `json:"purpose"`
	Numbered bool   `json:"numbered,omitempty"`
}

// DefaultSections returns the six sections a pad has when [Options.Sections]
// is nil. The caller owns the returned slice.
func DefaultSections() []Section {
	return []Section{
		{Name: "Task", Cap: 300, Purpose: "The goal as given, in one or two lines. Rewrite only if the goal changes."},
		{Name: "Plan", Cap: 800, Numbered: true, Purpose: "Numbered steps; tick each with check when it is done."},
		{Name: "Findings", Cap: 1500, Purpose: "Facts established so far, each with where it came from."},
		{Name: "Ruled out", Cap: 600, Purpose: "Approaches tried and rejected, and why, so they are not retried."},
		{Name: "Open questions", Cap: 400, Purpose: "What is still unknown and blocks progress."},
		{Name: "Next", Cap: 200, Purpose: "The very next action to take."},
	}
}

// Render modes for [Options.Render].
const (
	RenderMarkdown = "markdown"
	RenderXML      = "xml"
	RenderJSON     = "json"
	RenderKV       = "kv"
)

// RenderModes lists the render modes, the default first.
var RenderModes = []string{RenderMarkdown, RenderXML, RenderJSON, RenderKV}

// Storage formats for [Options.Format].
const (
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Options configures a [Pad]. The zero value means the defaults of a
// Markdown pad with [DefaultSections], Markdown rendering, no token bound,
// entries kept forever and 20 history versions.
type Options struct {
	// Sections of a Markdown pad; nil means [DefaultSections].
	Sections []Section
	// Render is how reads are rendered: "markdown" (default), "xml",
	// "json" or "kv".
	Render string
	// Header is an optional line put first in every rendering.
	Header string
	// ReadOnly removes update_scratchpad and append_scratchpad from
	// [Tools]; the pad itself (and the CLI) still writes.
	ReadOnly bool
	// Template is the text a new pad starts as, in its stored form
	// (pad.md or pad.json); it must parse. "" means the empty sections or
	// the empty object.
	Template string
	// MaxTokens bounds a rendering by folding the oldest ledger entries;
	// sections are never cut. 0 means unbounded.
	MaxTokens int
	// EntryTTL hides ledger entries older than this; 0 keeps them forever.
	EntryTTL time.Duration
	// DefaultTTL is the TTL of a key set without one; 0: keys without a
	// ttl never expire.
	DefaultTTL time.Duration
	// History is how many versions .history/ keeps; 0 means 20.
	History int
	// Format is "markdown" (default) or "json" (structured mode).
	Format string
	// Schema is a JSON Schema the state must satisfy in structured mode.
	// Nil means any JSON object.
	Schema []byte
	// MaxDepth caps the nesting depth of a structured state; 0 means 32.
	MaxDepth int
	// Count counts tokens for MaxTokens; nil means a rough len/4.
	Count func(string) int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

const (
	defaultHistory  = 20
	defaultMaxDepth = 32
	// maxNoteChars bounds one ledger note: a ledger entry is a finding, not
	// a dump, and the bound keeps each append a single small write.
	maxNoteChars = 4000
)

// normalize fills defaults and rejects options that cannot work, so the
// rest of the package can trust them.
func (o Options) normalize() (Options, error) {
	if o.Sections == nil {
		o.Sections = DefaultSections()
	} else {
		o.Sections = append([]Section(nil), o.Sections...)
	}
	seen := map[string]bool{}
	for i, s := range o.Sections {
		name := strings.TrimSpace(s.Name)
		switch {
		case name == "":
			return o, fmt.Errorf("%w: section %d has no name", ErrOptions, i+1)
		case strings.ContainsAny(name, "\n\r"):
			return o, fmt.Errorf("%w: section name %q spans lines", ErrOptions, name)
		case seen[strings.ToLower(name)]:
			return o, fmt.Errorf("%w: duplicate section %q", ErrOptions, name)
		case s.Cap < 0:
			return o, fmt.Errorf("%w: section %q has a negative cap", ErrOptions, name)
		}
		seen[strings.ToLower(name)] = true
		o.Sections[i].Name = name
	}
	if len(o.Sections) == 0 {
		return o, fmt.Errorf("%w: no sections", ErrOptions)
	}
	switch o.Render {
	case "":
		o.Render = RenderMarkdown
	case RenderMarkdown, RenderXML, RenderJSON, RenderKV:
	default:
		return o, fmt.Errorf("%w: render %q (want markdown, xml, json or kv)", ErrOptions, o.Render)
	}
	switch o.Format {
	case "":
		o.Format = FormatMarkdown
	case FormatMarkdown, FormatJSON:
	default:
		return o, fmt.Errorf("%w: format %q (want markdown or json)", ErrOptions, o.Format)
	}
	if o.MaxTokens < 0 {
		o.MaxTokens = 0
	}
	if o.History <= 0 {
		o.History = defaultHistory
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = defaultMaxDepth
	}
	if o.Count == nil {
		o.Count = roughCount
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// roughCount estimates tokens as a quarter of the bytes, rounded up: close
// enough for English and JSON, and never zero for non-empty text.
func roughCount(s string) int { return (len(s) + 3) / 4 }
