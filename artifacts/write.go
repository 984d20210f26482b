package artifacts

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

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
	var replaced bool
	if s.kv != nil {
		replaced, err = s.kv.write(name, content)
		if err == nil {
			// This host's copy for exploring is stale now.
			_ = os.Remove(filepath.Join(s.dir, name))
		}
	} else {
		replaced, err = s.write(name, content)
	}
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
	tmp := layout.TempName(name, hex.EncodeToString(rnd[:]))
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
