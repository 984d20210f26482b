package divert

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
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
}

// DetectFormat tells how data should be stored and explored. JSON is a
// single valid value starting with { or [; NDJSON is two or more lines that
// are each a JSON object or array; Markdown has ATX headings, fences or
// tables; anything else is text.
func DetectFormat(data []byte) string {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
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
		if (line[0] != '{' && line[0] != '[') || !json.Valid(line) {
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

// prepare detects data's format and turns it into the bytes to store:
// JSON pretty-printed with two-space indent (one value per line, so line
// tools work on it), everything else as it is, with a trailing newline.
// JSON is validated once, by the indenting itself.
func prepare(data []byte) (stored []byte, format string) {
	t := bytes.TrimSpace(data)
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		var buf bytes.Buffer
		buf.Grow(len(t) + len(t)/2)
		if err := json.Indent(&buf, t, "", "  "); err == nil {
			buf.WriteByte('\n')
			return buf.Bytes(), FormatJSON
		}
	}
	format = detectNonJSON(t)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return append(append(make([]byte, 0, len(data)+1), data...), '\n'), format
	}
	return data, format
}

// fileName is {server}-{tool}-{hash8}.{ext}; the hash is of the stored
// bytes, so the same output twice is one file.
func fileName(server, tool, format string, stored []byte) string {
	sum := sha256.Sum256(stored)
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

// Save stores an output in dir (created 0700 if missing) and describes it.
// The write is atomic: a crash or a full disk leaves either the complete
// file or nothing, never a partial one, and never touches other files.
func Save(dir, server, tool string, data []byte) (Stored, error) {
	stored, format := prepare(data)
	name := fileName(server, tool, format, stored)
	path := filepath.Join(dir, name)
	st := Stored{Name: name, Path: path, Format: format, Bytes: len(stored), Lines: bytes.Count(stored, []byte{'\n'})}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(stored)) {
		// Pointed to again: it is as young as a new file for retention
		// (max_age, and a sweep that planned to remove it keeps it).
		now := time.Now()
		if os.Chtimes(path, now, now) == nil {
			st.Reused = true
			return st, nil
		}
		// Gone meanwhile (a sweep): write it again.
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Stored{}, fmt.Errorf("create scratchpad dir: %w", bareErr(err))
	}
	if err := WriteFileAtomic(path, stored, 0o600); err != nil {
		return Stored{}, err
	}
	return st, nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory: write, fsync, rename over path, fsync the directory. On any
// error the temporary file is removed and path is untouched.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
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
		if strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp-") {
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
