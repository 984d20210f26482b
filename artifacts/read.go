package artifacts

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

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
	if s.kv != nil {
		return s.kv.read(res, names, maxBytes)
	}
	root, err := s.d.OpenRoot()
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil // no artifacts yet: nothing available
	}
	if err != nil {
		return res, classify(layout.ArtifactsDir, err)
	}
	defer root.Close()
	for _, name := range names {
		f, err := explore.OpenRegular(root, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, explore.ErrNotRegular) {
			return res, fmt.Errorf("artifacts: %s: %w", name, ErrNotFile)
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
	return withAvailable(res, entries), nil
}

// withAvailable fills a result for a name not found: what the run has
// instead, the first [MaxAvailable] names.
func withAvailable(res ReadResult, entries []Entry) ReadResult {
	for i, e := range entries {
		if i == MaxAvailable {
			res.AvailableOmitted = len(entries) - MaxAvailable
			break
		}
		res.Available = append(res.Available, e.Name)
	}
	return res
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
	if r, ok := strings.CutPrefix(rest, layout.ArtifactsDir+"/"); ok {
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
	if errors.Is(err, memdir.ErrOutside) || strings.Contains(err.Error(), "path escapes from parent") {
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
