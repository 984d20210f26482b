package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine gives the first sentence of a tool description, on one line, at
// most max runes (no limit for max <= 0): the first paragraph with its
// white space collapsed, up to the first ". ", "! " or "? " that does not
// end an abbreviation such as "e.g.". A first sentence shorter than half
// of max takes the next one too when both fit ("Get the logs of a pod's
// container." says little without "Use previous=true for a crashed one.").
// What is still too long is cut at the last word that fits, with "…".
func OneLine(desc string, max int) string {
	desc = strings.TrimSpace(desc)
	if i := strings.Index(desc, "\n\n"); i >= 0 {
		desc = desc[:i]
	}
	desc = strings.TrimLeft(desc, "# ")
	all := strings.Join(strings.FieldsFunc(desc, isSpaceOrControl), " ")
	s := firstSentence(all)
	if max > 0 && len(s) < len(all) && utf8.RuneCountInString(s) < max/2 {
		if two := s + " " + firstSentence(all[len(s)+1:]); utf8.RuneCountInString(two) <= max {
			s = two
		}
	}
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	// Cut at max-1 runes, leaving room for "…".
	cut, n := len(s), 0
	for i := range s {
		if n == max-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if j := strings.LastIndexByte(head, ' '); j > len(head)/2 {
		head = head[:j]
	}
	head = strings.TrimRight(head, " ,;:-–—(")
	return head + "…"
}

// isSpaceOrControl: control characters in a description are dropped like
// white space, so that a line stays one line whatever an upstream sends.
func isSpaceOrControl(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// abbreviations end with a period that ends no sentence.
var abbreviations = []string{"e.g", "i.e", "etc", "vs", "approx", "incl", "ex", "cf", "no", "eg", "ie"}

func firstSentence(s string) string {
	for i := 0; i < len(s)-1; i++ {
		c := s[i]
		if (c != '.' && c != '!' && c != '?') || s[i+1] != ' ' {
			continue
		}
		if c == '.' {
			w := s[:i]
			if j := strings.LastIndexByte(w, ' '); j >= 0 {
				w = w[j+1:]
			}
			w = strings.ToLower(strings.TrimLeft(w, "(\"'"))
			if contains(abbreviations, w) {
				continue
			}
		}
		return s[:i+1]
	}
	return s
}

// Format renders hits as the answer of a search: one line per tool, its
// exposed name, its argument signature and the first sentence of its
// description:
//
//	github__list_issues(owner: string, repo: string, state?: "open"|"closed"|"all", …+5) — List issues in a GitHub repository.
//
// A long signature keeps every required argument and as many optional
// ones as fit in [FormatSignatureBudget] bytes, then says how many it
// left out ("…+5"): the model asks for the full schema when it needs one
// of those. Descriptions are cut at [FormatDescriptionRunes].
func (ix *Index) Format(hits []Hit) string {
	var b strings.Builder
	for _, h := range hits {
		if h.Tool < 0 || h.Tool >= len(ix.tools) {
			continue
		}
		formatTool(&b, &ix.tools[h.Tool])
		b.WriteByte('\n')
	}
	return b.String()
}

// FormatLine is the line [Index.Format] gives a tool, without the newline.
func FormatLine(t Tool) string {
	var b strings.Builder
	formatTool(&b, &t)
	return b.String()
}

func formatTool(b *strings.Builder, t *Tool) {
	if strings.ContainsFunc(t.Name, unicode.IsControl) {
		// Not callable as shown, but never a broken line.
		b.WriteString(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return '?'
			}
			return r
		}, t.Name))
	} else {
		b.WriteString(t.Name)
	}
	b.WriteByte('(')
	b.WriteString(joinParams(params(t.InputSchema), FormatSignatureBudget))
	b.WriteByte(')')
	if d := OneLine(t.Description, FormatDescriptionRunes); d != "" {
		b.WriteString(" — ")
		b.WriteString(d)
	}
}

// The sizes of one line of [Index.Format]: with the default limit of
// [DefaultLimit] hits, an answer stays within a few hundred tokens.
const (
	FormatSignatureBudget  = 160
	FormatDescriptionRunes = 120
)
