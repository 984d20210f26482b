package pad

import (
	"fmt"
	"io"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// MemoryCommands lists the subcommands [MemoryCommand] accepts.
var MemoryCommands = []string{"show", "history", "diff", "restore"}

// MemoryCommand runs `scratchpad-mcp pad show|history|diff|restore
// --memory PATH` on p's memory files and returns the process exit code:
// 0 success, 1 failure, 2 misuse. path is as the model writes it
// (/memories/notes.md); n is the version for diff and restore (1 = the
// newest). show prints a file's content as it is, or a folder's listing
// as the model sees it; history lists the file's saved versions (a
// deleted file's too); diff shows the change that made version n;
// restore makes version n the file's content again, as a new revision
// (bringing a deleted file back), under the pad's lock.
func MemoryCommand(p *Pad, o MemoryOptions, sub, path string, n int, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "scratchpad-mcp pad %s --memory: %v\n", sub, err)
		return 1
	}
	rel, err := memory.Clean(path)
	if err != nil {
		return fail(err)
	}
	st := p.Memory(o).(*memStore)
	switch sub {
	case "show":
		f, err := st.Read(rel)
		if err == nil {
			_, err = stdout.Write(f.Text)
			if err != nil {
				return fail(err)
			}
			return 0
		}
		m, err := memory.New(st, memory.Options{})
		if err != nil {
			return fail(err)
		}
		text, err := m.View(path, nil)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(stdout, text)
	case "history":
		vs, deleted, err := st.b.memVersions(rel, 0)
		if err != nil {
			return fail(err)
		}
		if len(vs) == 0 {
			fmt.Fprintf(stdout, "no versions of %s\n", memory.Display(rel))
			return 0
		}
		cur, _, live, err := st.b.memRead(rel)
		if err != nil {
			return fail(err)
		}
		state := ""
		if deleted && !live {
			state = " (deleted)"
		}
		fmt.Fprintf(stdout, "%s%s\n%3s  %8s  %-24s  %7s\n", memory.Display(rel), state, "N", "revision", "saved (UTC)", "bytes")
		for i, v := range vs {
			mark := ""
			if data, err := v.read(); err == nil && live && i == 0 && string(data) == string(cur) {
				mark = "  (current)"
			}
			fmt.Fprintf(stdout, "%3d  %8d  %-24s  %7d%s\n", i+1, v.Rev, v.Time.Format("2006-01-02T15:04:05.000Z"), v.Size, mark)
		}
	case "diff":
		d, err := st.diff(rel, n)
		if err != nil {
			return fail(err)
		}
		if d == "" {
			d = "(no difference)\n"
		}
		fmt.Fprint(stdout, d)
	case "restore":
		rev, v, err := st.restore(rel, n)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintf(stdout, "restored %s to version %d (revision %d, saved %s) as revision %d\n",
			memory.Display(rel), n, v.Rev, v.Time.Format(time.RFC3339), rev)
	default:
		fmt.Fprintf(stderr, "scratchpad-mcp pad: --memory goes with show, history, diff or restore, not %q\n", sub)
		return 2
	}
	return 0
}

// version returns version n (1 = newest) of path and all of them.
func (s *memStore) version(path string, n int) (memVersion, []memVersion, error) {
	vs, _, err := s.b.memVersions(path, 0)
	if err != nil {
		return memVersion{}, nil, err
	}
	if n < 1 || n > len(vs) {
		return memVersion{}, nil, fmt.Errorf("%w: %d (%s has %d)", ErrNoVersion, n, memory.Display(path), len(vs))
	}
	return vs[n-1], vs, nil
}

// diff is the change that made version n of path, as a unified diff.
func (s *memStore) diff(path string, n int) (string, error) {
	to, vs, err := s.version(path, n)
	if err != nil {
		return "", err
	}
	b, err := to.read()
	if err != nil {
		return "", err
	}
	var a []byte
	fromName := "/dev/null"
	if n < len(vs) {
		if a, err = vs[n].read(); err != nil {
			return "", err
		}
		fromName = fmt.Sprintf("a%s@%d", memory.Display(path), vs[n].Rev)
	}
	return unifiedDiff(fromName, fmt.Sprintf("b%s@%d", memory.Display(path), to.Rev), a, b), nil
}

// restore writes version n of path as its content again, under the lock,
// and returns the new revision. A folder, or a file, now in the way is
// refused.
func (s *memStore) restore(path string, n int) (int64, memVersion, error) {
	v, _, err := s.version(path, n)
	if err != nil {
		return 0, v, err
	}
	text, err := v.read()
	if err != nil {
		return 0, v, err
	}
	tx, err := s.Lock()
	if err != nil {
		return 0, v, err
	}
	defer tx.Unlock()
	files, err := s.Files()
	if err != nil {
		return 0, v, err
	}
	for _, f := range files {
		switch {
		case len(f.Path) > len(path) && f.Path[:len(path)+1] == path+"/":
			return 0, v, fmt.Errorf("%s is a folder now", memory.Display(path))
		case len(path) > len(f.Path) && path[:len(f.Path)+1] == f.Path+"/":
			return 0, v, fmt.Errorf("%s is a file now, in the way of %s", memory.Display(f.Path), memory.Display(path))
		}
	}
	rev, err := tx.Write(path, text, s.p.opts.Now())
	if err != nil {
		return 0, v, err
	}
	return rev, v, nil
}
