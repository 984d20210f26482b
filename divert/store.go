package divert

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
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
	dir     memdir.Dir    // the folder it is in
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

// Save stores an output in the folder d (created 0700 if missing; the file
// is 0600; a link planted on the way that leads out of memory_dir fails it
// with an error wrapping [memdir.ErrOutside]) and describes it:
// JSON pretty-printed with a two-space indent (one value per line, so line
// tools work on it), everything else as it is, with a trailing newline.
// The file is written as it is formatted, hashed and counted on the way
// (one pass, never a second copy of the output in memory), to a temporary
// file that is synced and renamed into place: a crash or a full disk
// leaves either the complete file or nothing, never a partial one, and
// never touches other files.
func Save(d memdir.Dir, server, tool string, data []byte) (Stored, error) {
	if err := d.Make(); err != nil {
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
	base := layout.OutputPrefix(server, tool) // the temporary file's, before the hash names it
	// asJSON pretty-prints t; asIs writes data as it is.
	asJSON := func(f io.Writer) error {
		format, lengths, ends, src = FormatJSON, arrayLengths{}, containerEnds{}, source{ok: true, size: len(data)}
		tw = newTally(f)
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
	asIs := func(f io.Writer) error {
		format, lengths, ends, src = detectNonJSON(t), nil, nil, source{ok: true, size: len(data)}
		tw = newTally(f)
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
		tmp, err = writeTemp(d, base, asJSON)
		if !<-valid {
			if err == nil {
				_ = d.Remove(tmp)
			}
			tmp, err = writeTemp(d, base, asIs)
		}
	} else {
		tmp, err = writeTemp(d, base, asIs)
	}
	if err != nil {
		return Stored{}, err
	}
	name := layout.OutputName(server, tool, format, tw.h.Sum(nil))
	st := Stored{Name: name, Path: d.Join(name), Format: format, Bytes: int(tw.n), Lines: tw.lines, lengths: lengths, ends: ends, src: src, dir: d}
	if fi, err := d.Lstat(name); err == nil && fi.Mode().IsRegular() && fi.Size() == tw.n {
		// Pointed to again: it is as young as a new file for retention
		// (max_age, and a sweep that planned to remove it keeps it). Gone
		// meanwhile (a sweep): the new copy takes its place below.
		now := time.Now()
		if d.Chtimes(name, now, now) == nil {
			_ = d.Remove(tmp)
			st.Reused = true
			return st, nil
		}
	}
	if err := d.Commit(tmp, name); err != nil {
		return Stored{}, fmt.Errorf("rename %s: %w", name, bareErr(err))
	}
	return st, nil
}

// tally writes to a file and hashes and counts what it writes. The hash
// is CRC-32C: the name keeps 32 bits of it ([layout.OutputName]), to tell
// one output from another, not to resist forgery (an upstream can only
// name its own outputs alike), and SHA-256 cost about 25 ms of CPU a
// 24 MB save (BenchmarkSave20MB).
type tally struct {
	f     io.Writer
	h     hash.Hash
	n     int64
	lines int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newTally(f io.Writer) *tally { return &tally{f: f, h: crc32.New(castagnoli)} }

func (t *tally) Write(p []byte) (int, error) {
	t.h.Write(p)
	t.n += int64(len(p))
	t.lines += bytes.Count(p, []byte{'\n'})
	return t.f.Write(p)
}

// writeTemp has write fill a temporary file for base in d (memdir's
// half of the atomic write: created exclusively, 0600, synced, closed)
// and returns its name; on any error it is removed.
func writeTemp(d memdir.Dir, base string, write func(w io.Writer) error) (string, error) {
	tmp, err := d.WriteTemp(base, write)
	if err != nil {
		return "", fmt.Errorf("write to the scratchpad: %w", bareErr(err))
	}
	return tmp, nil
}

// CleanTemp removes temporary files a crash left in the folder d. A
// missing folder is not an error.
func CleanTemp(d memdir.Dir) error {
	entries, err := d.ReadDir("")
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if layout.IsTemp(e.Name()) {
			_ = d.Remove(e.Name())
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
