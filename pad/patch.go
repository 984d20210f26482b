package pad

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Patch is one change to one section of a Markdown pad.
//
// Content means: for append, the item(s) to add, one per line; for replace,
// the new body; for check, the item number to tick ("3"); for remove, the
// text whose lines are dropped; for clear, nothing.
type Patch struct {
	Section string `json:"section"`
	Op      string `json:"op"`
	Content string `json:"content,omitempty"`
}

// UnmarshalJSON accepts content as a number too: models often send
// {"op": "check", "content": 2}.
func (p *Patch) UnmarshalJSON(data []byte) error {
	var raw struct {
		Section string          `json:"section"`
		Op      string          `json:"op"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*p = Patch{Section: raw.Section, Op: raw.Op}
	c := bytes.TrimSpace(raw.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		return json.Unmarshal(c, &p.Content)
	default:
		var n json.Number
		if err := json.Unmarshal(c, &n); err != nil {
			return fmt.Errorf("patch content must be a string or a number: %w", err)
		}
		p.Content = n.String()
	}
	return nil
}

// Patch operations.
const (
	OpAppend  = "append"
	OpReplace = "replace"
	OpCheck   = "check"
	OpRemove  = "remove"
	OpClear   = "clear"
)

// Ops lists the patch operations in the order the tool schema shows them.
var Ops = []string{OpAppend, OpReplace, OpCheck, OpRemove, OpClear}

// allOps are every op update_scratchpad takes: the section ops, then the
// key and snapshot ops. An unknown op's error lists them all.
func allOps() []string { return append(slices.Clone(Ops), KeyOps...) }

var (
	// numberedItem matches "N. rest" with optional indentation.
	numberedItem = regexp.MustCompile(`^(\s*)(\d+)\.\s+(.*)$`)
	// checkbox matches a leading "[ ]" or "[x]" in an item's text.
	checkbox = regexp.MustCompile(`^\[([ xX])\]\s*`)
	// bullet matches a leading list marker a model may send along.
	bullet = regexp.MustCompile(`^\s*(?:[-*+]|\d+\.)\s+`)
)

// validatePatches checks every patch before anything is applied, so an
// update either applies whole or not at all.
func validatePatches(patches []Patch, sections []Section) error {
	for i, p := range patches {
		fail := func(sentinel error, format string, args ...any) error {
			return &PatchError{Index: i, Patch: p, Err: fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))}
		}
		idx := sectionIndex(sections, p.Section)
		if idx < 0 {
			return &PatchError{Index: i, Patch: p, Err: fmt.Errorf("%w %s (sections: %s)", ErrUnknownSection, quoteArg(p.Section), sectionNames(sections))}
		}
		s := sections[idx]
		switch p.Op {
		case OpAppend:
			if strings.TrimSpace(p.Content) == "" {
				return fail(ErrBadPatch, "append to %q needs content", s.Name)
			}
		case OpReplace:
			for _, line := range strings.Split(p.Content, "\n") {
				if _, ok := isHeading(strings.TrimRight(line, "\r")); ok {
					return fail(ErrBadPatch, "replace content for %q may not contain a \"## \" heading line; one patch changes one section", s.Name)
				}
			}
		case OpCheck:
			if !s.Numbered {
				return fail(ErrBadPatch, "check applies to numbered sections only; %q is not numbered", s.Name)
			}
			if _, err := itemNumber(p.Content); err != nil {
				return fail(ErrBadPatch, "check needs the item number in content, e.g. \"2\"; got %s", quoteArg(p.Content))
			}
		case OpRemove:
			if strings.TrimSpace(p.Content) == "" {
				return fail(ErrBadPatch, "remove from %q needs content: the text whose lines to drop (use clear to empty the section)", s.Name)
			}
			if strings.Contains(p.Content, "\n") {
				return fail(ErrBadPatch, "remove content must be one line of text")
			}
		case OpClear:
		default:
			return &PatchError{Index: i, Patch: p, Err: fmt.Errorf("%w %s (ops: %s)", ErrUnknownOp, quoteArg(p.Op), strings.Join(allOps(), ", "))}
		}
	}
	return nil
}

func itemNumber(s string) (int, error) {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "#"))
	s = strings.TrimSuffix(s, ".")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("not an item number: %s", quoteArg(s))
	}
	return n, nil
}

// applyPatches applies validated patches to d in order and returns the
// warnings an operation produced (nothing matched, out of range). Caps are
// checked by the caller on the result.
//
// A check of an item the section does not have is an error, a
// *PatchError wrapping ErrBadPatch: the patches go together or not at
// all, and "updated" must not be said of a call that changed nothing it
// asked for.
func applyPatches(d *document, patches []Patch) ([]string, error) {
	var warnings []string
	for pi, p := range patches {
		i := d.index(p.Section)
		s := d.sections[i]
		body := d.bodies[i]
		switch p.Op {
		case OpAppend:
			d.bodies[i] = appendItems(body, p.Content, s.Numbered)
		case OpReplace:
			d.bodies[i] = trimBlankLines(strings.Split(strings.ReplaceAll(p.Content, "\r\n", "\n"), "\n"))
		case OpCheck:
			n, _ := itemNumber(p.Content)
			nb, w, err := checkItem(body, n, s.Name)
			if err != nil {
				return nil, &PatchError{Index: pi, Patch: p, Err: err}
			}
			d.bodies[i] = nb
			if w != "" {
				warnings = append(warnings, w)
			}
		case OpRemove:
			var kept []string
			removed := 0
			for _, line := range splitBody(body) {
				if strings.Contains(line, p.Content) {
					removed++
					continue
				}
				kept = append(kept, line)
			}
			if removed == 0 {
				warnings = append(warnings, fmt.Sprintf("remove: no line in %q contains %s; nothing removed", s.Name, quoteArg(p.Content)))
			}
			d.bodies[i] = trimBlankLines(kept)
		case OpClear:
			d.bodies[i] = ""
		}
	}
	return warnings, nil
}

func splitBody(body string) []string {
	if body == "" {
		return nil
	}
	return strings.Split(body, "\n")
}

// appendItems adds each non-blank content line as a list item: "N. [ ] x"
// in a numbered section, "- x" elsewhere. A list marker the model already
// wrote is dropped so items never come out as "- - x".
func appendItems(body, content string, numbered bool) string {
	lines := splitBody(body)
	next := 1
	if numbered {
		for _, l := range lines {
			if m := numberedItem.FindStringSubmatch(l); m != nil {
				if n, err := strconv.Atoi(m[2]); err == nil && n >= next {
					next = n + 1
				}
			}
		}
	}
	for _, raw := range strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n") {
		item := strings.TrimSpace(raw)
		if item == "" {
			continue
		}
		item = bullet.ReplaceAllString(item, "")
		if numbered {
			mark := " "
			if m := checkbox.FindStringSubmatch(item); m != nil {
				if m[1] != " " {
					mark = "x"
				}
				item = item[len(m[0]):]
			}
			lines = append(lines, fmt.Sprintf("%d. [%s] %s", next, mark, item))
			next++
		} else {
			lines = append(lines, "- "+item)
		}
	}
	return trimBlankLines(lines)
}

// checkItem ticks the item numbered n, as written in the file, so a hand
// renumbering is respected. Out of range and already ticked items warn.
func checkItem(body string, n int, section string) (string, string, error) {
	lines := splitBody(body)
	count := 0
	for j, l := range lines {
		m := numberedItem.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		count++
		num, _ := strconv.Atoi(m[2])
		if num != n {
			continue
		}
		rest := m[3]
		if cb := checkbox.FindStringSubmatch(rest); cb != nil {
			if cb[1] != " " {
				return body, fmt.Sprintf("check: item %d of %q was already checked", n, section), nil
			}
			rest = rest[len(cb[0]):]
		}
		lines[j] = fmt.Sprintf("%s%d. [x] %s", m[1], num, rest)
		return strings.Join(lines, "\n"), "", nil
	}
	if count == 0 {
		return body, "", fmt.Errorf("%w: check: %q has no numbered items, so there is no item %d; nothing was changed", ErrBadPatch, section, n)
	}
	return body, "", fmt.Errorf("%w: check: %q has no item %d (it has %d items); nothing was changed", ErrBadPatch, section, n, count)
}
