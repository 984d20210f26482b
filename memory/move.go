package memory

import (
	"fmt"
	"time"
)

// delete removes a file, or a folder and every file in it.
func (m *Memory) delete(path string, exp *int64) (string, error) {
	rel, err := Clean(path)
	if err != nil {
		return "", err
	}
	p := Display(rel)
	if rel == "" {
		return "", refuse(ErrBadArguments, fmt.Sprintf("Error: Cannot delete the %s directory itself", Root))
	}
	return m.locked(func(tx Tx, sc *scope, now time.Time) (string, error) {
		cur, isFile, err := m.current(sc, rel)
		isDir := !isFile && sc.isDir(rel)
		switch {
		case err != nil:
			return "", linkOr(p, err)
		case !isFile && !isDir:
			return "", refuse(ErrNotFound, fmt.Sprintf("Error: The path %s does not exist", p))
		case m.touchesReadOnly(rel):
			return "", refuseReadOnly(p)
		case isDir && exp != nil:
			return "", refuse(ErrBadArguments, fmt.Sprintf("Error: expected_revision applies to a file, and %s is a directory; nothing was changed.", p))
		}
		if err := checkRevision(p, exp, cur.Rev); err != nil {
			return "", err
		}
		if err := tx.Remove(rel, isDir, now); err != nil {
			return "", linkOr(p, err)
		}
		return fmt.Sprintf("Successfully deleted %s", p), nil
	})
}

// rename moves a file or a folder to a path that does not exist yet,
// creating the folders it needs.
func (m *Memory) rename(oldPath, newPath string, exp *int64) (string, error) {
	from, err := Clean(oldPath)
	if err != nil {
		return "", err
	}
	to, err := Clean(newPath)
	if err != nil {
		return "", err
	}
	op, np := Display(from), Display(to)
	if from == "" {
		return "", refuse(ErrBadArguments, fmt.Sprintf("Error: Cannot rename the %s directory itself", Root))
	}
	return m.locked(func(tx Tx, sc *scope, now time.Time) (string, error) {
		cur, isFile, err := m.current(sc, from)
		isDir := !isFile && sc.isDir(from)
		switch {
		case err != nil:
			return "", linkOr(op, err)
		case !isFile && !isDir:
			return "", refuse(ErrNotFound, fmt.Sprintf("Error: The path %s does not exist", op))
		case sc.isDir(to) || sc.files[to].Path != "":
			return "", refuse(ErrExists, fmt.Sprintf("Error: The destination %s already exists", np))
		case within(to, from):
			return "", refuse(ErrBadArguments, fmt.Sprintf("Error: Cannot move %s into itself (%s)", op, np))
		case sc.fileAbove(to) != "":
			return "", refuse(ErrIsDir, fmt.Sprintf("Error: Cannot rename to %s: %s is a file, not a directory", np, Display(sc.fileAbove(to))))
		case m.touchesReadOnly(from):
			return "", refuseReadOnly(op)
		case isDir && exp != nil:
			return "", refuse(ErrBadArguments, fmt.Sprintf("Error: expected_revision applies to a file, and %s is a directory; nothing was changed.", op))
		}
		if err := checkRevision(op, exp, cur.Rev); err != nil {
			return "", err
		}
		moving := []string{from}
		if isDir {
			moving = sc.inside(from)
		}
		for _, f := range moving {
			// Every file moved must land on a path Clean takes, and on
			// no read-only one.
			dest := to + f[len(from):]
			if moved := Display(dest); CheckPath(moved) != nil {
				return "", refuse(ErrBadPath, fmt.Sprintf("Error: Cannot rename %s to %s: %s would become %s, which is too long or too deep (paths up to %d bytes and %d levels below %s); nothing was changed.", op, np, Display(f), moved, MaxPathBytes, MaxDepth, Root))
			}
			if m.readOnly(dest) {
				return "", refuseReadOnly(Display(dest))
			}
		}
		if err := tx.Rename(from, to, isDir, now); err != nil {
			return "", linkOr(op, err)
		}
		answer := fmt.Sprintf("Successfully renamed %s to %s", op, np)
		if isFile {
			answer += revNote(cur.Rev)
		}
		return answer, nil
	})
}
