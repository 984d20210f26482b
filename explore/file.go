package explore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// fileKind is how a file's contents are interpreted.
type fileKind int

const (
	kindText fileKind = iota
	kindJSON
	kindNDJSON
	kindMarkdown
	kindCSV
	kindTSV
)

func (k fileKind) String() string {
	return [...]string{"text", "JSON", "NDJSON", "Markdown", "CSV", "TSV"}[k]
}

// span is a half-open byte range of doc.data.
type span struct{ start, end int }

// doc is a loaded file with its indexes. data never changes after
// load; the child index of big containers fills in lazily.
type doc struct {
	name string // the file argument as the caller gave it
	data []byte
	kind fileKind
	// mapped: data is a read-only mapping of the file ([Env.MapFiles]).
	mapped bool

	linesOnce sync.Once
	lines     []int        // byte offset of the start of each line; use lineStarts
	nlines    atomic.Int64 // line count + 1 once counted; 0 = not yet

	jsonErr string // non-empty: kind is JSON but the file does not parse
	records []span // NDJSON: one per non-blank line
	badRecs []int  // NDJSON: indexes of records that are not valid JSON

	csvOnce sync.Once
	csv     *doc // CSV/TSV: the rows as a JSON array; use csvView

	mu    sync.Mutex
	kids  map[int][]child // children of big containers, keyed by start offset
	extra atomic.Int64    // bytes held by kids and the tape

	tapeOnce sync.Once
	tapeList []tapeEntry // every container, for descents; use tape
}

func (d *doc) memSize() int64 {
	return int64(len(d.data)) + int64(len(d.records))*16 + d.extra.Load()
}

// lineStarts returns the line index, building it on first use: the JSON
// path tools never need it, so a first get_in does not pay for it.
func (d *doc) lineStarts() []int {
	d.linesOnce.Do(func() {
		d.lines = indexLines(d.data)
		d.extra.Add(int64(cap(d.lines)) * 8)
	})
	return d.lines
}

// lineCount is the number of lines; a final line without a newline counts.
func (d *doc) lineCount() int { return len(d.lineStarts()) }

// countLines is lineCount without building the index when it is not built
// yet (grep on a cold file).
func (d *doc) countLines() int {
	if n := d.nlines.Load(); n > 0 {
		return int(n - 1)
	}
	n := bytes.Count(d.data, []byte{'\n'})
	if len(d.data) > 0 && d.data[len(d.data)-1] != '\n' {
		n++
	}
	d.nlines.Store(int64(n) + 1)
	return n
}

// line returns line n (1-based) without its line terminator.
func (d *doc) line(n int) []byte {
	lines := d.lineStarts()
	s := lines[n-1]
	e := len(d.data)
	if n < len(lines) {
		e = lines[n]
	}
	b := d.data[s:e]
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// lineOf returns the 1-based line holding byte offset off.
func (d *doc) lineOf(off int) int {
	lines := d.lineStarts()
	return sort.Search(len(lines), func(i int) bool { return lines[i] > off })
}

func indexLines(data []byte) []int {
	if len(data) == 0 {
		return nil
	}
	// Counting first (SIMD-fast) sizes the index exactly: no regrowth.
	lines := make([]int, 1, bytes.Count(data, []byte{'\n'})+1)
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i >= len(data) {
			break
		}
		lines = append(lines, i)
	}
	return lines
}

// resolveName maps a file argument to a cleaned path relative to the root.
// It is lexical only; os.Root enforces symlink confinement when opening.
func resolveName(dir, name string) (string, error) {
	if name == "" || strings.IndexByte(name, 0) >= 0 {
		return "", ErrInvalidName
	}
	if strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return "", ErrOutsideRoot
	}
	p := path.Clean(path.Join(filepath.ToSlash(dir), filepath.ToSlash(name)))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", ErrOutsideRoot
	}
	return p, nil
}

// load opens name under env's root and returns it loaded and indexed, from
// the cache when the file is unchanged.
func load(env *Env, name string) (*doc, error) {
	if env == nil || env.Root == nil || env.Count == nil {
		return nil, ErrNoRoot
	}
	if d := env.docs[name]; d != nil {
		return d, nil
	}
	rel, err := resolveName(env.Dir, name)
	if err != nil {
		return nil, err
	}
	if err := fetch(env, rel); err != nil {
		return nil, err
	}
	f, err := OpenRegular(env.Root, rel)
	if err != nil {
		return nil, classifyOpenErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: stat: %v", ErrIO, errnoText(err))
	}
	if !st.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	key := env.Root.Name() + "\x00" + rel
	if d := env.Cache.get(key, st.Size(), st.ModTime()); d != nil {
		return d, nil
	}
	data, mapped := []byte(nil), false
	if env.MapFiles && st.Size() >= MinMapBytes {
		data, mapped = mapFile(f, st.Size())
	}
	if !mapped {
		data = make([]byte, st.Size())
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, fmt.Errorf("%w: read: %v", ErrIO, errnoText(err))
		}
	}
	d := newDoc(name, rel, data)
	d.mapped = mapped
	env.Cache.put(key, st.Size(), st.ModTime(), d)
	return d, nil
}

// classifyOpenErr maps os.Root errors to sentinels without passing on the
// underlying message, which could name a symlink target.
func classifyOpenErr(err error) error {
	switch {
	case errors.Is(err, ErrNotRegular):
		return ErrNotRegular
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case errors.Is(err, syscall.ELOOP), strings.Contains(err.Error(), "escapes"):
		return ErrOutsideRoot
	case errors.Is(err, syscall.ENOTDIR):
		return ErrNotFound
	case errors.Is(err, syscall.EINVAL):
		return ErrInvalidName
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: permission denied", ErrIO)
	}
	return fmt.Errorf("%w: open: %v", ErrIO, errnoText(err))
}

// errnoText keeps only the innermost error text (an errno), dropping the
// path that os wraps around it.
func errnoText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// newDoc indexes data and decides how to interpret it: by extension first,
// then by content for .txt/.log and unknown extensions.
func newDoc(name, rel string, data []byte) *doc {
	d := &doc{name: name, data: data}
	ext := strings.ToLower(path.Ext(rel))
	switch ext {
	case ".md", ".markdown":
		d.kind = kindMarkdown
	case ".csv":
		d.kind = kindCSV
	case ".tsv":
		d.kind = kindTSV
	case ".ndjson", ".jsonl":
		d.setNDJSON()
	case ".json":
		if d.indexJSON() {
			d.kind = kindJSON
		} else if d.looksNDJSON() {
			d.jsonErr = ""
			d.setNDJSON()
		} else {
			d.kind = kindJSON
		}
	default:
		first := jsonscan.SkipSpace(data, 0)
		switch {
		case first < len(data) && (data[first] == '{' || data[first] == '[') && d.indexJSON():
			d.kind = kindJSON
		case d.looksNDJSON():
			d.setNDJSON()
		}
		d.jsonErr = ""
	}
	return d
}

// indexJSON validates and indexes the whole file as one JSON value; on
// failure it records where the syntax breaks in jsonErr.
func (d *doc) indexJSON() bool {
	kids, off, msg := indexJSON(d.data, bigContainer)
	if msg != "" {
		d.jsonErr = d.position(off) + ": " + msg
		return false
	}
	d.kids = kids
	var n int64
	for _, k := range kids {
		n += int64(cap(k)) * 32
	}
	d.extra.Add(n)
	return true
}

// position renders a byte offset as "line L, column C".
func (d *doc) position(off int) string {
	ln := max(d.lineOf(off), 1)
	col := 1
	if lines := d.lineStarts(); ln <= len(lines) {
		col = off - lines[ln-1] + 1
	}
	return fmt.Sprintf("line %d, column %d", ln, col)
}

// looksNDJSON reports whether the first two non-blank lines are each a JSON
// object or array on their own. It reads only those lines, so classifying a
// big log does not build its line index.
func (d *doc) looksNDJSON() bool {
	seen := 0
	for rest := d.data; len(rest) > 0 && seen < 2; {
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if (l[0] != '{' && l[0] != '[') || !jsonscan.Valid(l) {
			return false
		}
		seen++
	}
	return seen == 2
}

func (d *doc) setNDJSON() {
	d.kind = kindNDJSON
	lines := d.lineStarts()
	for n := 1; n <= len(lines); n++ {
		s := lines[n-1]
		l := d.line(n)
		lead := len(l) - len(bytes.TrimLeft(l, " \t"))
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if !jsonscan.Valid(l) {
			d.badRecs = append(d.badRecs, len(d.records))
		}
		d.records = append(d.records, span{s + lead, s + lead + len(l)})
	}
}

// statSize returns the size of name under env's root without reading it.
func statSize(env *Env, name string) (int64, error) {
	if env == nil || env.Root == nil || env.Count == nil {
		return 0, ErrNoRoot
	}
	rel, err := resolveName(env.Dir, name)
	if err != nil {
		return 0, err
	}
	if err := fetch(env, rel); err != nil {
		return 0, err
	}
	f, err := OpenRegular(env.Root, rel)
	if err != nil {
		return 0, classifyOpenErr(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%w: stat: %v", ErrIO, errnoText(err))
	}
	if !st.Mode().IsRegular() {
		return 0, ErrNotRegular
	}
	return st.Size(), nil
}

// fetch asks [Env].Fetch to make rel present under the root (a stored
// output another replica wrote). Not found there either falls through to
// the open's own not-found answer.
func fetch(env *Env, rel string) error {
	if env.Fetch == nil {
		return nil
	}
	if err := env.Fetch(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: fetching the stored output from the shared store: %v", ErrIO, err)
	}
	return nil
}
