package artifacts

import (
	"errors"
	"path/filepath"
	"sync"
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
