package memory

import (
	"fmt"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// echoBytes bounds how much of an old_str a refusal repeats.
const echoBytes = 500

// create writes a new file. An existing file is refused, unless
// expected_revision names its revision: then it is replaced (a
// compare-and-swap overwrite).
func (m *Memory) create(path, text string, exp *int64) (string, error) {
	rel, err := Clean(path)
	if err != nil {
		return "", err
	}
	p := Display(rel)
	return m.locked(func(tx Tx, sc *scope, now time.Time) (string, error) {
		switch {
		case sc.isDir(rel):
			return "", refuse(ErrIsDir, fmt.Sprintf("Error: The path %s is a directory; create writes a file.", p))
		case sc.fileAbove(rel) != "":
			return "", refuse(ErrIsDir, fmt.Sprintf("Error: Cannot create %s: %s is a file, not a directory.", p, Display(sc.fileAbove(rel))))
		case m.readOnly(rel):
			return "", refuseReadOnly(p)
		}
		cur, exists, err := m.current(sc, rel)
		if err != nil {
			return "", linkOr(p, err)
		}
		switch {
		case exists && exp == nil:
			return "", refuse(ErrExists, fmt.Sprintf("Error: File %s already exists", p))
		case exp != nil:
			if err := checkRevision(p, exp, cur.Rev); err != nil {
				return "", err
			}
		}
		if err := m.checkBounds(sc, p, cur.Size, !exists, int64(len(text))); err != nil {
			return "", err
		}
		rev, err := tx.Write(rel, []byte(text), now)
		if err != nil {
			return "", linkOr(p, err)
		}
		return fmt.Sprintf("File created successfully at: %s", p) + revNote(rev), nil
	})
}

// edit is a change of an existing file's text under the lock: str_replace
// and insert. change returns the new text and the answer's first part;
// missing is the refusal of a path with no file (the two commands word it
// differently).
func (m *Memory) edit(path string, exp *int64, missing string, change func(p, text string) (next, answer string, err error)) (string, error) {
	rel, err := Clean(path)
	if err != nil {
		return "", err
	}
	p := Display(rel)
	return m.locked(func(tx Tx, sc *scope, now time.Time) (string, error) {
		cur, exists, err := m.current(sc, rel)
		switch {
		case err != nil:
			return "", linkOr(p, err)
		case !exists:
			return "", refuse(ErrNotFound, fmt.Sprintf(missing, p))
		case m.readOnly(rel):
			return "", refuseReadOnly(p)
		}
		if err := checkRevision(p, exp, cur.Rev); err != nil {
			return "", err
		}
		next, answer, err := change(p, string(cur.Text))
		if err != nil {
			return "", err
		}
		if err := m.checkBounds(sc, p, cur.Size, false, int64(len(next))); err != nil {
			return "", err
		}
		rev, err := tx.Write(rel, []byte(next), now)
		if err != nil {
			return "", linkOr(p, err)
		}
		return answer + revNote(rev), nil
	})
}

// strReplace replaces old, which must appear exactly once, with new.
func (m *Memory) strReplace(path, old, new string, exp *int64) (string, error) {
	return m.edit(path, exp, "Error: The path %s does not exist. Please provide a valid path.", func(p, text string) (string, string, error) {
		if old == "" {
			return "", "", refuse(ErrBadArguments, fmt.Sprintf("Error: old_str is empty; give the exact text to replace in %s (it must appear once).", p))
		}
		quoted := tool.Clip(old, echoBytes)
		switch n := strings.Count(text, old); {
		case n == 0:
			return "", "", refuse(ErrNoMatch, fmt.Sprintf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", quoted, p))
		case n > 1:
			var at []string // each occurrence's line, as the tool's clients list them
			for off := 0; ; {
				i := strings.Index(text[off:], old)
				if i < 0 {
					break
				}
				at = append(at, fmt.Sprint(lineOf(text, off+i)))
				off += i + len(old)
			}
			return "", "", refuse(ErrNotUnique, fmt.Sprintf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique", quoted, strings.Join(at, ", ")))
		}
		i := strings.Index(text, old)
		next := text[:i] + new + text[i+len(old):]
		// The snippet: four lines around the change, as the text editor
		// tool shows one.
		ls := lines(next)
		from := max(lineOf(next, i)-4, 1)
		to := min(lineOf(next, i)+strings.Count(new, "\n")+4, len(ls))
		var b strings.Builder
		b.WriteString("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n")
		if from <= to {
			numbered(&b, ls[from-1:to], from)
		}
		return next, b.String(), nil
	})
}

// insert puts text after line n (0: before the first line), as lines of
// their own: a line feed ends the inserted text, and one is added before
// it at the end of a file whose last line has none.
func (m *Memory) insert(path string, n int, text string, exp *int64) (string, error) {
	return m.edit(path, exp, "Error: The path %s does not exist", func(p, cur string) (string, string, error) {
		ls := lines(cur)
		if n < 0 || n > len(ls) {
			return "", "", refuse(ErrLineRange, fmt.Sprintf("Error: Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", n, len(ls)))
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		// off is where line n+1 starts: after n line feeds, or at the end.
		off := len(cur)
		if n < len(ls) {
			off = 0
			for range n {
				off += strings.IndexByte(cur[off:], '\n') + 1
			}
		} else if cur != "" && !strings.HasSuffix(cur, "\n") {
			cur += "\n"
			off++
		}
		return cur[:off] + text + cur[off:], fmt.Sprintf("The file %s has been edited.", p), nil
	})
}
