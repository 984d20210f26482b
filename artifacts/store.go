package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// MaxAvailable bounds the names listed in a not-found answer.
const MaxAvailable = 40

// Store is one run's artifacts directory.
// It is safe for concurrent use. Every read and write goes through an
// [os.Root] opened on the directory's tree (memory_dir, see package
// memdir), so nothing outside it can be reached, even through a symbolic
// link planted at the folder, a parent or a name inside.
type Store struct {
	d  memdir.Dir
	mu sync.Mutex // serializes writes, so Replaced is exact within a process
	// kv, when set, holds the artifacts ([OpenRedis]); dir is then only
	// this host's cache of those too large to return ([Store.Local]).
	kv *redisKV
}

// Open returns the store of the artifacts folder d (a run's, as package
// layout names it, in memory_dir's tree). It touches nothing on disk: the
// folder is created by the first [Store.Write], and reads of a run that
// has none find nothing.
func Open(d memdir.Dir) (*Store, error) {
	if d.Top() == "" {
		return nil, errors.New("artifacts: empty directory")
	}
	return &Store{d: d}, nil
}

// Dir returns the artifacts directory (a Redis store's local cache).
func (s *Store) Dir() string { return s.d.Path() }

// Local makes the artifact name readable in place at Dir()/name: on a
// file store it is already there; a Redis store copies it there
// (atomically, replacing an older copy), so the exploration tools can read
// an artifact too large to return whole.
func (s *Store) Local(name string) error {
	if s.kv == nil {
		return nil
	}
	data, ok, err := s.kv.get(name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("artifacts: %s: %w", name, fs.ErrNotExist)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.write(name, data); err != nil {
		return fmt.Errorf("artifacts: copy %s for exploring: %w", name, err)
	}
	return nil
}
