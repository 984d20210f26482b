package artifacts

import (
	"fmt"
	"io"
	"unicode/utf8"
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
			_ = s.d.Remove(name)
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

// write stores content as name in the folder through memdir's atomic
// write (0600, the folder 0700), reporting whether name existed.
func (s *Store) write(name, content string) (replaced bool, err error) {
	tmp, err := s.d.WriteTemp(name, func(w io.Writer) error {
		_, err := io.WriteString(w, content)
		return err
	})
	if err != nil {
		return false, err
	}
	_, statErr := s.d.Lstat(name)
	if err := s.d.Commit(tmp, name); err != nil {
		return false, err
	}
	return statErr == nil, nil
}
