package pad

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// document is a parsed Markdown pad: one body per declared section, in the
// declared order. A body has no leading or trailing blank lines and no
// final newline.
type document struct {
	sections []Section
	bodies   []string
}

func newDocument(sections []Section) *document {
	return &document{sections: sections, bodies: make([]string, len(sections))}
}

func (d *document) clone() *document {
	return &document{sections: d.sections, bodies: append([]string(nil), d.bodies...)}
}

// index finds a section by name: exactly first, then ignoring case, so a
// hand-typed "## next" still counts.
func (d *document) index(name string) int {
	return sectionIndex(d.sections, name)
}

func sectionIndex(sections []Section, name string) int {
	name = strings.TrimSpace(name)
	for i, s := range sections {
		if s.Name == name {
			return i
		}
	}
	for i, s := range sections {
		if strings.EqualFold(s.Name, name) {
			return i
		}
	}
	return -1
}

// isHeading reports whether a line opens a section. Only level-2 headings
// do, and fenced code is not special-cased: a heading is a heading
// wherever it stands, which keeps the format predictable for hand edits.
func isHeading(line string) (name string, ok bool) {
	if line == "##" {
		return "", true
	}
	if strings.HasPrefix(line, "## ") {
		return strings.TrimSpace(line[3:]), true
	}
	return "", false
}

// parseMarkdown parses a pad file. Sections missing from the file are
// empty; an unknown or duplicate heading or text before the first heading
// is a *ParseError.
func parseMarkdown(src []byte, sections []Section) (*document, error) {
	d := newDocument(sections)
	if !utf8.Valid(src) {
		return nil, &ParseError{File: mdFile, Reason: "not valid UTF-8"}
	}
	text := strings.ReplaceAll(string(src), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	seen := make([]bool, len(sections))
	cur := -1
	var body []string
	flush := func() {
		if cur >= 0 {
			d.bodies[cur] = trimBlankLines(body)
		}
		body = body[:0]
	}
	for i, line := range lines {
		if name, ok := isHeading(line); ok {
			idx := sectionIndex(sections, name)
			if idx < 0 {
				return nil, &ParseError{File: mdFile, Line: i + 1, Reason: fmt.Sprintf("unknown section heading %q (sections: %s)", name, sectionNames(sections))}
			}
			if seen[idx] {
				return nil, &ParseError{File: mdFile, Line: i + 1, Reason: fmt.Sprintf("duplicate section heading %q", name)}
			}
			flush()
			seen[idx] = true
			cur = idx
			continue
		}
		if cur < 0 {
			if strings.TrimSpace(line) != "" {
				return nil, &ParseError{File: mdFile, Line: i + 1, Reason: "text before the first section heading"}
			}
			continue
		}
		body = append(body, line)
	}
	flush()
	return d, nil
}

// salvageMarkdown reads what it can of a file that does not parse: text
// under known headings is kept (duplicates concatenated), everything else
// is reported as lost so the caller can say so. It never fails.
func salvageMarkdown(src []byte, sections []Section) (*document, []string) {
	d := newDocument(sections)
	text := strings.ToValidUTF8(strings.ReplaceAll(string(src), "\r\n", "\n"), "\uFFFD")
	cur := -1
	var dropped []string
	bodies := make([][]string, len(sections))
	for _, line := range strings.Split(text, "\n") {
		if name, ok := isHeading(line); ok {
			cur = sectionIndex(sections, name)
			if cur < 0 {
				dropped = append(dropped, fmt.Sprintf("text under unknown heading %q", name))
			}
			continue
		}
		if cur < 0 {
			if strings.TrimSpace(line) != "" && len(dropped) == 0 {
				dropped = append(dropped, "text before the first heading")
			}
			continue
		}
		bodies[cur] = append(bodies[cur], line)
	}
	for i := range bodies {
		d.bodies[i] = trimBlankLines(bodies[i])
	}
	return d, dropped
}

func trimBlankLines(lines []string) string {
	start, end := 0, len(lines)
	for start < end && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	for end > start && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	out := make([]string, 0, end-start)
	for _, l := range lines[start:end] {
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.Join(out, "\n")
}

// format writes the file form. Every declared section is written, empty or
// not, so the file keeps a stable shape and diffs stay small.
func (d *document) format() []byte {
	var b strings.Builder
	for i, s := range d.sections {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("## ")
		b.WriteString(s.Name)
		b.WriteString("\n")
		if d.bodies[i] != "" {
			b.WriteString(d.bodies[i])
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

// capWarnings lists the sections over their cap. Over-cap text is kept:
// the warning asks the model to condense, nothing is cut.
func (d *document) capWarnings() []string {
	var out []string
	for i, s := range d.sections {
		n := utf8.RuneCountInString(d.bodies[i])
		if s.Cap > 0 && n > s.Cap {
			out = append(out, fmt.Sprintf("section %q is over its cap: %d/%d characters; nothing was cut, condense it with replace", s.Name, n, s.Cap))
		}
	}
	return out
}

func sectionNames(sections []Section) string {
	names := make([]string, len(sections))
	for i, s := range sections {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}
