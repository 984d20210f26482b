package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

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
	if s.kv != nil {
		return s.kv.list(count)
	}
	root, err := s.d.OpenRoot()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(layout.ArtifactsDir, err)
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
		if layout.IsTemp(name) || de.IsDir() {
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
