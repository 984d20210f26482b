package divert

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Formats a stored output is detected as. The file extension follows.
const (
	FormatJSON     = "json"
	FormatNDJSON   = "ndjson"
	FormatMarkdown = "md"
	FormatText     = "txt"
)

// Stored describes an output written to an agent's scratchpad directory.
type Stored struct {
	Name   string // file name inside the scratchpad dir
	Path   string // absolute path
	Format string // FormatJSON, FormatNDJSON, FormatMarkdown or FormatText
	Bytes  int    // size of the stored file
	Lines  int    // lines in the stored file
	Reused bool   // an identical output was already stored under Name

	lengths arrayLengths  // array lengths found while writing JSON, for the sketch
	ends    containerEnds // where its containers end, likewise
	src     source        // how to read back what was saved
}

// DetectFormat tells how data should be stored and explored. JSON is a
// single valid value starting with { or [; NDJSON is two or more lines that
// are each a JSON object or array; Markdown has ATX headings, fences or
// tables; anything else is text.
func DetectFormat(data []byte) string {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && jsonscan.Valid(t) {
		return FormatJSON
	}
	return detectNonJSON(t)
}

// detectNonJSON is [DetectFormat] for trimmed data already known not to
// be one JSON value.
func detectNonJSON(t []byte) string {
	if len(t) == 0 {
		return FormatText
	}
	if t[0] == '{' || t[0] == '[' {
		if isNDJSON(t) {
			return FormatNDJSON
		}
	}
	if looksMarkdown(t) {
		return FormatMarkdown
	}
	return FormatText
}

func isNDJSON(t []byte) bool {
	n := 0
	for len(t) > 0 {
		line := t
		if i := bytes.IndexByte(t, '\n'); i >= 0 {
			line, t = t[:i], t[i+1:]
		} else {
			t = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if (line[0] != '{' && line[0] != '[') || !jsonscan.Valid(line) {
			return false
		}
		n++
	}
	return n >= 2
}

func looksMarkdown(t []byte) bool {
	// Look at the first 64 KiB only: the decision needs a few signals.
	if len(t) > 64<<10 {
		t = t[:64<<10]
	}
	signals := 0
	for _, line := range strings.Split(string(t), "\n") {
		l := strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(l, "# "), strings.HasPrefix(l, "## "), strings.HasPrefix(l, "### "),
			strings.HasPrefix(l, "#### "), strings.HasPrefix(l, "```"), strings.HasPrefix(l, "|---"),
			strings.HasPrefix(l, "| ---"):
			signals++
		}
		if signals >= 2 {
			return true
		}
	}
	return false
}

// fileName is {server}-{tool}-{hash8}.{ext}; the hash is of the stored
// bytes, so the same output twice is one file.
func fileName(server, tool, format string, sum []byte) string {
	return fmt.Sprintf("%s-%s-%s.%s", safeName(server), safeName(tool), hex.EncodeToString(sum[:4]), format)
}

// safeName keeps [A-Za-z0-9_.-] and maps everything else to '_', so a tool
// name like "fs/read" cannot make a path.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	out := strings.Trim(string(b), ".")
	if out == "" {
		out = "_"
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}

// Save stores an output in dir (created 0700 if missing) and describes it:
// JSON pretty-printed with a two-space indent (one value per line, so line
// tools work on it), everything else as it is, with a trailing newline.
// The file is written as it is formatted, hashed and counted on the way
// (one pass, never a second copy of the output in memory), to a temporary
// file that is synced and renamed into place: a crash or a full disk
// leaves either the complete file or nothing, never a partial one, and
// never touches other files.
func Save(dir, server, tool string, data []byte) (Stored, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Stored{}, fmt.Errorf("create scratchpad dir: %w", bareErr(err))
	}
	t := bytes.TrimSpace(data)
	var (
		format  string
		lengths arrayLengths
		ends    containerEnds
		src     source
		tw      *tally
	)
	pattern := layout.TempPattern(safeName(server) + "-" + safeName(tool))
	// asJSON pretty-prints t; asIs writes data as it is.
	asJSON := func(f *os.File) error {
		format, lengths, ends, src = FormatJSON, arrayLengths{}, containerEnds{}, source{ok: true, size: len(data)}
		tw = &tally{f: f, h: sha256.New()}
		bw := newWriteBehind(tw)
		lay, err := indentTo(bw, t, lengths, ends)
		if err == nil {
			_, err = bw.Write([]byte{'\n'})
		}
		if cerr := bw.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		// t is data less the space TrimSpace took off each end.
		at := len(data) - len(bytes.TrimLeftFunc(data, unicode.IsSpace))
		lead, trail := data[:at], data[at+len(t):]
		src.jsonLayout = lay
		src.ok = lay != layoutOther && len(lead) <= maxEdge && len(trail) <= maxEdge
		if src.ok {
			src.lead, src.trail = bytes.Clone(lead), bytes.Clone(trail)
		}
		return nil
	}
	asIs := func(f *os.File) error {
		format, lengths, ends, src = detectNonJSON(t), nil, nil, source{ok: true, size: len(data)}
		tw = &tally{f: f, h: sha256.New()}
		w := bufio.NewWriterSize(tw, 1<<20)
		_, _ = w.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			_ = w.WriteByte('\n')
		}
		return w.Flush()
	}
	var tmp string
	var err error
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		// Pretty-printed while it is validated on the other core (a pass
		// less before the first byte is written); if it was not JSON after
		// all (the indenter gives up on what it cannot lay out, and writes
		// nonsense for the rest), it is written again as it is.
		valid := make(chan bool, 1)
		go func() { valid <- jsonscan.Valid(t) }()
		tmp, err = writeTemp(dir, pattern, asJSON)
		if !<-valid {
			if err == nil {
				_ = os.Remove(tmp)
			}
			tmp, err = writeTemp(dir, pattern, asIs)
		}
	} else {
		tmp, err = writeTemp(dir, pattern, asIs)
	}
	if err != nil {
		return Stored{}, err
	}
	name := fileName(server, tool, format, tw.h.Sum(nil))
	path := filepath.Join(dir, name)
	st := Stored{Name: name, Path: path, Format: format, Bytes: int(tw.n), Lines: tw.lines, lengths: lengths, ends: ends, src: src}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == tw.n {
		// Pointed to again: it is as young as a new file for retention
		// (max_age, and a sweep that planned to remove it keeps it). Gone
		// meanwhile (a sweep): the new copy takes its place below.
		now := time.Now()
		if os.Chtimes(path, now, now) == nil {
			_ = os.Remove(tmp)
			st.Reused = true
			return st, nil
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return Stored{}, fmt.Errorf("rename %s: %w", name, bareErr(err))
	}
	syncDir(dir)
	return st, nil
}

// tally writes to a file and hashes and counts what it writes.
type tally struct {
	f     *os.File
	h     hash.Hash
	n     int64
	lines int
}

func (t *tally) Write(p []byte) (int, error) {
	t.h.Write(p)
	t.n += int64(len(p))
	t.lines += bytes.Count(p, []byte{'\n'})
	return t.f.Write(p)
}

// writeTemp creates a temporary file in dir named after pattern, has
// write fill it, syncs and closes it, and returns its path; on any error
// it is removed.
func writeTemp(dir, pattern string, write func(f *os.File) error) (tmp string, err error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", fmt.Errorf("write to the scratchpad: %w", bareErr(err))
	}
	name := f.Name() // the returns below set tmp to "": remove by this
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(name)
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return "", fmt.Errorf("write to the scratchpad: %w", bareErr(err))
	}
	if err = write(f); err != nil {
		return "", fmt.Errorf("write to the scratchpad: %w", bareErr(err))
	}
	if err = f.Sync(); err != nil {
		return "", fmt.Errorf("sync: %w", bareErr(err))
	}
	if err = f.Close(); err != nil {
		return "", fmt.Errorf("close: %w", bareErr(err))
	}
	return name, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory: write, fsync, rename over path, fsync the directory. On any
// error the temporary file is removed and path is untouched.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, layout.TempPattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), bareErr(err))
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), bareErr(err))
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), bareErr(err))
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Base(path), bareErr(err))
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", filepath.Base(path), bareErr(err))
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", filepath.Base(path), bareErr(err))
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// CleanTemp removes temporary files a crash left in dir. Missing dir is
// not an error.
func CleanTemp(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if layout.IsTemp(e.Name()) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return nil
}

// bareErr drops the path from an *fs.PathError or *os.LinkError: the
// error reaches the model, which needs the cause (no space left on
// device), not where memory_dir is on this host.
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
