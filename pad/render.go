package pad

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Render renders v in mode ("markdown", "xml" or "json"; anything else is
// Markdown). With [Options.MaxTokens] set, the oldest ledger entries are
// folded into "N earlier findings omitted" until the rendering fits;
// sections are never cut, so a pad whose sections alone exceed the bound
// is rendered whole with a warning saying so.
func (p *Pad) Render(v *View, mode string) string {
	return p.renderMax(v, mode, p.opts.MaxTokens)
}

// renderMax renders v within max tokens (0: unbounded): the oldest ledger
// entries fold first; if that is not enough, keys are left out, least
// recently set first (see render_keys.go). No entry or key is ever cut in
// half, and sections never are.
func (p *Pad) renderMax(v *View, mode string, max int) string {
	if v.MaxTokens != max {
		cp := *v
		cp.MaxTokens = max
		v = &cp
	}
	out := renderView(v, mode, 0, "")
	if max <= 0 || p.opts.Count(out) <= max || len(v.Entries) == 0 {
		if max > 0 && p.opts.Count(out) > max {
			return p.dropKeys(v, mode, len(v.Entries), max)
		}
		return out
	}
	n := len(v.Entries)
	fits := func(k int) bool { return p.opts.Count(renderView(v, mode, k, "")) <= max }
	// Start from an estimate built from per-entry costs (tokens are close
	// to additive across lines), then correct it with whole renderings; a
	// plain binary search would render the pad about log2(n) times.
	k := p.estimateFold(v, mode, max)
	if fits(k) {
		for steps := 0; k > 1 && steps < 4 && fits(k-1); steps++ {
			k--
		}
	} else {
		// Rendering size shrinks as more entries fold: binary search (k, n],
		// n taken to fit (nothing fits: everything folded; k was already n).
		k = min(k+1+sort.Search(n-k-1, func(i int) bool { return fits(k + 1 + i) }), n)
	}
	out = renderView(v, mode, k, "")
	if c := p.opts.Count(out); c > max {
		return p.dropKeys(v, mode, k, max)
	}
	return out
}

// estimateFold guesses how many of the oldest entries to fold: the pad
// with everything folded, plus the newest entries that fit in what is left.
func (p *Pad) estimateFold(v *View, mode string, max int) int {
	n := len(v.Entries)
	left := max - p.opts.Count(renderView(v, mode, n, ""))
	k := n
	for k > 1 {
		c := p.opts.Count(entryText(mode, v.Entries[k-1]))
		if c > left {
			break
		}
		left -= c
		k--
	}
	return k
}

// entryText is one entry as the given mode renders it.
func entryText(mode string, e Entry) string {
	switch mode {
	case RenderXML:
		return xmlEntry(e)
	case RenderJSON:
		data, _ := json.MarshalIndent(e, "    ", "  ")
		return string(data) + ",\n    "
	default:
		return mdEntry(e)
	}
}

func mdEntry(e Entry) string {
	tags := ""
	if len(e.Tags) > 0 {
		tags = " [" + strings.Join(e.Tags, ", ") + "]"
	}
	by := ""
	if e.By != "" {
		by = " (" + e.By + ")"
	}
	return fmt.Sprintf("- %s%s%s %s\n", entryTime(e.Time), by, tags, indentContinuation(e.Note))
}

func xmlEntry(e Entry) string {
	by := ""
	if e.By != "" {
		by = fmt.Sprintf(" by=\"%s\"", xmlEscape(e.By))
	}
	return fmt.Sprintf("<entry ts=\"%s\"%s tags=\"%s\">%s</entry>\n", entryTime(e.Time), by, xmlEscape(strings.Join(e.Tags, ",")), xmlEscape(e.Note))
}

func overBudget(n, max int) string {
	return fmt.Sprintf("the pad renders to about %d tokens, over max_tokens %d, even with every ledger entry folded; sections are never cut, so condense them", n, max)
}

func renderView(v *View, mode string, omitted int, extraWarning string) string {
	warnings := v.Warnings
	if extraWarning != "" {
		warnings = append(append([]string(nil), warnings...), extraWarning)
	}
	entries := v.Entries[omitted:]
	switch mode {
	case RenderXML:
		return renderXML(v, entries, omitted, warnings)
	case RenderJSON:
		return renderJSON(v, entries, omitted, warnings)
	case RenderKV:
		return renderKV(v, entries, omitted, warnings)
	default:
		return renderMarkdown(v, entries, omitted, warnings)
	}
}

func entryTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func renderMarkdown(v *View, entries []Entry, omitted int, warnings []string) string {
	var b strings.Builder
	b.WriteString("# Scratchpad\n\n")
	if v.Header != "" {
		b.WriteString(v.Header + "\n\n")
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "> **Note:** %s\n\n", n)
	}
	for _, w := range warnings {
		fmt.Fprintf(&b, "> **Warning:** %s\n\n", w)
	}
	if v.KeysOnly {
		writeKeysMarkdown(&b, v)
		writeFooterMarkdown(&b, v, omitted)
		return b.String()
	}
	if v.Format == FormatJSON {
		b.WriteString("Structured state (update_scratchpad merges {state: {...}} into it):\n\n```json\n")
		data, _ := encodeState(v.State)
		b.Write(data)
		b.WriteString("```\n\n")
	} else {
		b.WriteString("Sections (used/cap characters; purpose). Change them with update_scratchpad.\n")
		for _, s := range v.Sections {
			kind := ""
			if s.Numbered {
				kind = ", numbered"
			}
			limit := fmt.Sprintf("%d/%d", s.Chars, s.Cap)
			if s.Cap == 0 {
				limit = fmt.Sprintf("%d, no cap", s.Chars)
			}
			fmt.Fprintf(&b, "- %s (%s%s): %s\n", s.Name, limit, kind, s.Purpose)
		}
		b.WriteString("\n")
		for _, s := range v.Sections {
			fmt.Fprintf(&b, "## %s\n", s.Name)
			if s.Body == "" {
				b.WriteString("(empty)\n\n")
			} else {
				b.WriteString(s.Body)
				b.WriteString("\n\n")
			}
		}
	}
	writeKeysMarkdown(&b, v)
	total := len(entries) + omitted
	noun := "entries"
	if total == 1 {
		noun = "entry"
	}
	fmt.Fprintf(&b, "## Ledger (append_scratchpad; %d %s, newest last)\n", total, noun)
	if omitted > 0 {
		fmt.Fprintf(&b, "- %d earlier findings omitted\n", omitted)
	}
	if len(entries)+omitted == 0 {
		b.WriteString("(empty)\n")
	}
	for _, e := range entries {
		b.WriteString(mdEntry(e))
	}
	writeFooterMarkdown(&b, v, omitted)
	return b.String()
}

// indentContinuation keeps a multi-line note inside its list item.
func indentContinuation(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// xmlEscaper escapes for both text and attribute values but keeps
// newlines literal (xml.EscapeText would write &#xA;, which a model reads
// worse).
var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func xmlEscape(s string) string {
	return xmlEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

func renderXML(v *View, entries []Entry, omitted int, warnings []string) string {
	var b strings.Builder
	b.WriteString("<scratchpad>\n")
	if v.Header != "" {
		fmt.Fprintf(&b, "<header>%s</header>\n", xmlEscape(v.Header))
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "<note>%s</note>\n", xmlEscape(n))
	}
	for _, w := range warnings {
		fmt.Fprintf(&b, "<warning>%s</warning>\n", xmlEscape(w))
	}
	if v.KeysOnly {
		writeKeysXML(&b, v)
		writeFooterXML(&b, v, omitted)
		b.WriteString("</scratchpad>\n")
		return b.String()
	}
	if v.Format == FormatJSON {
		data, _ := encodeState(v.State)
		fmt.Fprintf(&b, "<state>%s</state>\n", xmlEscape(strings.TrimSpace(string(data))))
	} else {
		for _, s := range v.Sections {
			fmt.Fprintf(&b, "<section name=\"%s\" cap=\"%d\" chars=\"%d\" numbered=\"%t\" purpose=\"%s\">", xmlEscape(s.Name), s.Cap, s.Chars, s.Numbered, xmlEscape(s.Purpose))
			if s.Body != "" {
				fmt.Fprintf(&b, "\n%s\n", xmlEscape(s.Body))
			}
			b.WriteString("</section>\n")
		}
	}
	writeKeysXML(&b, v)
	fmt.Fprintf(&b, "<ledger total=\"%d\" omitted=\"%d\">\n", len(entries)+omitted, omitted)
	for _, e := range entries {
		b.WriteString(xmlEntry(e))
	}
	b.WriteString("</ledger>\n")
	writeFooterXML(&b, v, omitted)
	b.WriteString("</scratchpad>\n")
	return b.String()
}

type jsonSection struct {
	Name     string `json:"name"`
	Cap      int    `json:"cap"`
	Chars    int    `json:"chars"`
	Numbered bool   `json:"numbered,omitempty"`
	Purpose  string `json:"purpose"`
	Content  string `json:"content"`
}

type jsonView struct {
	Header   string         `json:"header,omitempty"`
	Notes    []string       `json:"notes,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	Sections []jsonSection  `json:"sections,omitempty"`
	State    map[string]any `json:"state,omitempty"`
	Keys     []jsonKey      `json:"keys,omitempty"`
	KeyStats string         `json:"key_stats,omitempty"`
	Ledger   []Entry        `json:"ledger"`
	Total    int            `json:"ledger_total"`
	Omitted  int            `json:"ledger_omitted,omitempty"`
	LeftOut  *jsonLeftOut   `json:"left_out,omitempty"`
}

func renderJSON(v *View, entries []Entry, omitted int, warnings []string) string {
	if v.KeysOnly {
		return renderKeysJSON(v, warnings)
	}
	jv := jsonView{Header: v.Header, Notes: v.Notes, Warnings: warnings, State: v.State, Ledger: entries, Total: len(entries) + omitted, Omitted: omitted,
		Keys: jsonKeys(v.Keys), KeyStats: v.KeyStats, LeftOut: jsonLeftOutOf(v, omitted)}
	if jv.Ledger == nil {
		jv.Ledger = []Entry{}
	}
	for _, s := range v.Sections {
		jv.Sections = append(jv.Sections, jsonSection{Name: s.Name, Cap: s.Cap, Chars: s.Chars, Numbered: s.Numbered, Purpose: s.Purpose, Content: s.Body})
	}
	return string(marshalNoEscape(jv, "  "))
}
