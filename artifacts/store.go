package artifacts

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Dir is the name of a run's artifacts directory inside the run directory.
const Dir = "artifacts"

// MaxAvailable bounds the names listed in a not-found answer.
const MaxAvailable = 40

// tempPrefix marks files being written; List and lookups skip them.
const tempPrefix = ".tmp-"

// Store is one run's artifacts directory, {memory_dir}/{run_id}/artifacts.
// It is safe for concurrent use. Every read and write goes through an
// [os.Root] opened on the directory, so nothing outside it can be reached,
// even through a symbolic link placed inside.
type Store struct {
	dir string
	mu  sync.Mutex // serializes writes, so Replaced is exact within a process
}

// Open returns the store of the run directory runDir. It touches nothing
// on disk: the artifacts directory is created by the first [Store.Write],
// and reads of a run that has none find nothing.
func Open(runDir string) (*Store, error) {
	if runDir == "" {
		return nil, errors.New("artifacts: empty run directory")
	}
	return &Store{dir: filepath.Join(runDir, Dir)}, nil
}

// OpenRun returns the store of run runID under memoryDir, refusing a run
// id that is not one plain path element (it may come from a tool
// argument).
func OpenRun(memoryDir, runID string) (*Store, error) {
	if memoryDir == "" {
		return nil, errors.New("artifacts: empty memory directory")
	}
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	return Open(filepath.Join(memoryDir, runID))
}

// Dir returns the artifacts directory.
func (s *Store) Dir() string { return s.dir }

// WriteResult is the answer of write_artifact.
type WriteResult struct {
	Written  bool   `json:"written"`
	Filename string `json:"filename"`
	Replaced bool   `json:"replaced"`
	Chars    int    `json:"chars"`
	Error    string `json:"error,omitempty"`
}

// Write stores content under [StoredName](filename), atomically: a
// temporary file in the same directory is written, fsynced and renamed
// over the name, then the directory is fsynced, so readers see the old
// content or the new, never a part. Files are 0600, the directory 0700.
// Replaced reports that the name existed. On error the result carries the
// message too, ready to return to the model.
func (s *Store) Write(filename, content string) (WriteResult, error) {
	name, err := StoredName(filename)
	if err != nil {
		return WriteResult{Error: err.Error()}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	replaced, err := s.write(name, content)
	if err != nil {
		err = fmt.Errorf("artifacts: write %s: %w", name, err)
		return WriteResult{Error: "could not store the artifact: " + rootMessage(err)}, err
	}
	return WriteResult{Written: true, Filename: name, Replaced: replaced, Chars: utf8.RuneCountInString(content)}, nil
}

func (s *Store) write(name, content string) (replaced bool, err error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return false, err
	}
	root, err := os.OpenRoot(s.dir)
	if err != nil {
		return false, err
	}
	defer root.Close()

	var rnd [8]byte
	_, _ = rand.Read(rnd[:]) // never fails (crypto/rand panics instead)
	tmp := tempPrefix + hex.EncodeToString(rnd[:]) + "-" + name
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = root.Remove(tmp)
		}
	}()
	_, err = io.WriteString(f, content)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	_, statErr := root.Lstat(name)
	replaced = statErr == nil
	if err = root.Rename(tmp, name); err != nil {
		return false, err
	}
	// The rename is durable only once the directory is synced.
	if d, derr := root.Open("."); derr == nil {
		err = d.Sync()
		_ = d.Close()
	}
	return replaced, err
}

// Entry describes one artifact.
type Entry struct {
	Name string `json:"name"`
	Size int64  `json:"size_bytes"`
	// Tokens is set by [Store.List] with a [Counter].
	Tokens int `json:"tokens"`
	// TokensEstimated is true when Tokens was estimated from the size
	// (no counter, or a file too large to count cheaply).
	TokensEstimated bool `json:"tokens_estimated,omitempty"`
}

// ReadResult is the outcome of [Store.Read].
type ReadResult struct {
	Found    bool
	Filename string // the stored name that was found, else the name asked for
	Size     int64  // bytes
	Content  string
	// TooLarge is true when Size exceeded the maxBytes passed to Read:
	// Content was not read.
	TooLarge bool
	// Available lists up to [MaxAvailable] artifact names, sorted, when
	// not found; AvailableOmitted counts the rest.
	Available        []string
	AvailableOmitted int
}

// Read looks filename up and reads it. The exact name is tried first, then
// its [StoredName], so both "x.md" and "coordinator-x.md" find what
// write_artifact stored; the in-place path the model is shown
// ("../../artifacts/x.md", any number of "../") is accepted too. A name that is absent
// is not an error: Found is false and Available lists what exists. A name
// that would leave the directory fails with [ErrOutsideArtifacts]. With
// maxBytes > 0, a file larger than that is not read (TooLarge).
func (s *Store) Read(filename string, maxBytes int64) (ReadResult, error) {
	res := ReadResult{Filename: filename}
	names, err := candidates(filename)
	if err != nil {
		return res, err
	}
	root, err := os.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil // no artifacts yet: nothing available
	}
	if err != nil {
		return res, fmt.Errorf("artifacts: %w", err)
	}
	defer root.Close()
	for _, name := range names {
		f, err := root.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return res, classify(name, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return res, fmt.Errorf("artifacts: %s: %w", name, err)
		}
		if !st.Mode().IsRegular() {
			return res, fmt.Errorf("artifacts: %s: %w", name, ErrNotFile)
		}
		res.Found, res.Filename, res.Size = true, name, st.Size()
		if maxBytes > 0 && st.Size() > maxBytes {
			res.TooLarge = true
			return res, nil
		}
		limit := st.Size() + 1 // the file may grow while read; stay bounded
		if maxBytes > 0 {
			limit = maxBytes + 1
		}
		data, err := io.ReadAll(io.LimitReader(f, limit))
		if err != nil {
			return res, fmt.Errorf("artifacts: read %s: %w", name, err)
		}
		if maxBytes > 0 && int64(len(data)) > maxBytes {
			res.TooLarge, res.Size = true, int64(len(data))
			return res, nil
		}
		res.Size, res.Content = int64(len(data)), string(data)
		return res, nil
	}
	entries, err := s.list(root)
	if err != nil {
		return res, err
	}
	for i, e := range entries {
		if i == MaxAvailable {
			res.AvailableOmitted = len(entries) - MaxAvailable
			break
		}
		res.Available = append(res.Available, e.Name)
	}
	return res, nil
}

// candidates returns the names to try for filename, refusing paths that
// leave the directory.
func candidates(filename string) ([]string, error) {
	name := strings.TrimSpace(filename)
	if name == "" {
		return nil, fmt.Errorf("artifacts: empty name: %w", ErrInvalidName)
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) {
		return nil, fmt.Errorf("artifacts: %q: %w", filename, ErrOutsideArtifacts)
	}
	name = strings.ReplaceAll(name, `\`, "/")
	// Accept the in-place path the model was shown ("../../artifacts/x"):
	// leading "../" and "./" followed by "artifacts/".
	rest := name
	for {
		if r, ok := strings.CutPrefix(rest, "../"); ok {
			rest = r
		} else if r, ok := strings.CutPrefix(rest, "./"); ok {
			rest = r
		} else {
			break
		}
	}
	if r, ok := strings.CutPrefix(rest, Dir+"/"); ok {
		name = r
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return nil, fmt.Errorf("artifacts: %q: %w", filename, ErrOutsideArtifacts)
		}
	}
	out := []string{name}
	if stored, err := StoredName(name); err == nil && stored != name && !strings.Contains(name, "/") {
		out = append(out, stored)
	}
	return out, nil
}

// classify turns an os.Root error into one the model can read. os.Root
// reports escapes (absolute targets, "..", links pointing out) with an
// unexported error whose text is fixed; the path it names is ours, never
// the link's target.
func classify(name string, err error) error {
	if strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("artifacts: %q: %w", name, ErrOutsideArtifacts)
	}
	return fmt.Errorf("artifacts: %s: %w", name, err)
}

// rootMessage strips an error down to what may be shown to the model.
func rootMessage(err error) string {
	if errors.Is(err, ErrOutsideArtifacts) {
		return ErrOutsideArtifacts.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Counter counts the tokens of a text, as the tokens package does for the
// agent's model.
type Counter func(text string) int

// maxCountBytes bounds the files [Store.List] reads to count; larger ones
// are estimated.
const maxCountBytes = 4 << 20

// bytesPerToken is the estimate used without a counter: about right for
// English text and JSON with common tokenizers.
const bytesPerToken = 4

// List returns the artifacts, sorted by name: regular files only (no
// directories, temporaries, or links leading out). With a non-nil count
// each file up to 4 MiB is read and counted; larger files, and all files
// without a counter, get Tokens = size/4 with TokensEstimated set.
func (s *Store) List(count Counter) ([]Entry, error) {
	root, err := os.OpenRoot(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	defer root.Close()
	entries, err := s.list(root)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		e := &entries[i]
		if count == nil || e.Size > maxCountBytes {
			e.Tokens, e.TokensEstimated = int((e.Size+bytesPerToken-1)/bytesPerToken), true
			continue
		}
		data, err := root.ReadFile(e.Name)
		if err != nil {
			return nil, classify(e.Name, err)
		}
		e.Tokens = count(string(data))
	}
	return entries, nil
}

func (s *Store) list(root *os.Root) ([]Entry, error) {
	d, err := root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	defer d.Close()
	des, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("artifacts: list: %w", err)
	}
	var out []Entry
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, tempPrefix) || de.IsDir() {
			continue
		}
		var st fs.FileInfo
		switch {
		case de.Type().IsRegular():
			st, err = de.Info()
		case de.Type()&fs.ModeSymlink != 0:
			// Stat through the root: a link is followed only if it stays inside.
			st, err = root.Stat(name)
		default:
			continue
		}
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		out = append(out, Entry{Name: name, Size: st.Size()})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
