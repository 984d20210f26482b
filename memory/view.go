package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// View is the view command: a folder's listing ("/memories" included),
// or a file's lines numbered, all of them or the view_range window
// ([first, last], 1-based, last -1 for the end), with its revision. It
// takes no lock. With [Options.TTL], viewing a file renews it.
func (m *Memory) View(path string, viewRange []int) (string, error) {
	rel, err := Clean(path)
	if err != nil {
		return "", err
	}
	p := Display(rel)
	now := m.o.Now()
	if rel != "" {
		f, err := m.st.Read(rel)
		switch {
		case err == nil && !m.expired(f.Info, now):
			return m.viewFile(p, f, viewRange)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", linkOr(p, err)
		}
	}
	files, err := m.st.Files()
	if err != nil {
		return "", linkOr(p, err)
	}
	files, _ = m.live(files, now)
	listed := false
	for _, f := range files {
		if within(f.Path, rel) && f.Path != rel {
			listed = true
			break
		}
	}
	if rel != "" && !listed {
		return "", refuse(ErrNotFound, fmt.Sprintf("The path %s does not exist. Please provide a valid path.", p))
	}
	if viewRange != nil {
		return "", refuse(ErrBadArguments, "Error: The `view_range` parameter is not allowed when `path` points to a directory.")
	}
	return listing(rel, files), nil
}

// linkOr is the refusal of a path that runs through a symbolic link, or
// err as it is.
func linkOr(p string, err error) error {
	if errors.Is(err, ErrLink) {
		return refuse(ErrLink, fmt.Sprintf("Error: The path %s runs through a symbolic link, which the memory tool does not follow.", p))
	}
	return err
}

func (m *Memory) viewFile(p string, f File, viewRange []int) (string, error) {
	text := string(f.Text)
	ls := lines(text)
	if len(ls) > MaxLines {
		return "", refuse(ErrTooLarge, fmt.Sprintf("File %s exceeds maximum line limit of 999,999 lines.", p))
	}
	first := 1
	if viewRange != nil {
		lo, hi, err := window(viewRange, len(ls))
		if err != nil {
			return "", err
		}
		ls, first = ls[lo-1:hi], lo
	}
	if m.o.TTL > 0 {
		_ = m.st.Touch(f.Path, m.o.Now()) // a renewal that fails leaves the file to expire
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Here's the content of %s with line numbers:", p)
	if len(ls) > 0 {
		b.WriteByte('\n')
		numbered(&b, ls, first)
	}
	b.WriteString(revNote(f.Rev))
	return b.String(), nil
}

// window checks a view_range against a file of n lines and returns the
// lines it names, [lo, hi] (1-based). A last line past the end is the end.
func window(r []int, n int) (lo, hi int, err error) {
	bad := func(why string, a ...any) (int, int, error) {
		return 0, 0, refuse(ErrLineRange, fmt.Sprintf("Error: Invalid `view_range` parameter: %s. ", formatRange(r))+fmt.Sprintf(why, a...))
	}
	if len(r) != 2 {
		return bad("It should be a list of two integers.")
	}
	lo, hi = r[0], r[1]
	switch {
	case lo < 1 || lo > max(n, 1):
		return bad("Its first element `%d` should be within the range of lines of the file: [1, %d].", lo, n)
	case hi == -1 || hi > n:
		hi = n
	case hi < lo:
		return bad("Its second element `%d` should be larger or equal than its first `%d`.", hi, lo)
	}
	if n == 0 {
		lo = 1 // an empty file's window is empty
	}
	return lo, hi, nil
}

func formatRange(r []int) string {
	s := make([]string, len(r))
	for i, v := range r {
		s[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// listing is a folder's view: its size, then what is in it up to two
// levels deep (folders first among their own contents, names in order;
// a folder's path ends with /), each with its size, as du -h would show
// it. Names starting with "." are never stored, and node_modules is left
// out, as the header says.
func listing(rel string, files []Info) string {
	type entry struct {
		elems []string
		dir   bool
		size  int64
	}
	byPath := map[string]*entry{}
	var total int64
	for _, f := range files {
		if !within(f.Path, rel) || f.Path == rel {
			continue
		}
		sub := f.Path
		if rel != "" {
			sub = f.Path[len(rel)+1:]
		}
		elems := strings.Split(sub, "/")
		if slices.Contains(elems, "node_modules") {
			continue
		}
		total += f.Size
		for d := 1; d <= min(2, len(elems)); d++ {
			key := strings.Join(elems[:d], "/")
			e := byPath[key]
			if e == nil {
				e = &entry{elems: elems[:d], dir: d < len(elems)}
				byPath[key] = e
			}
			e.size += f.Size
		}
	}
	entries := make([]*entry, 0, len(byPath))
	for _, e := range byPath {
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b *entry) int { return slices.Compare(a.elems, b.elems) })
	p := Display(rel)
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n", p)
	fmt.Fprintf(&b, "%s\t%s", humanSize(total), p)
	for _, e := range entries {
		name := p + "/" + strings.Join(e.elems, "/")
		if e.dir {
			name += "/"
		}
		fmt.Fprintf(&b, "\n%s\t%s", humanSize(e.size), name)
	}
	return b.String()
}
