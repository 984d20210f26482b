package memorytest

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// Map is a [memory.Store] held in memory: the reference the stores of
// the pad's backends are held to, and the store of tests that need no
// disk. It keeps every file's versions and counts revisions as a Store
// must; it has no hand edits.
type Map struct {
	lock sync.Mutex   // the scope's lock, held by a Tx
	mu   sync.RWMutex // guards the maps

	files    map[string]*mapFile
	versions map[string][]Version // newest first
	deleted  map[string]time.Time
}

type mapFile struct {
	text     []byte
	accessed time.Time
}

// Version is one saved version of a file of a [Map].
type Version struct {
	Rev  int64
	Text string
	Time time.Time
}

// NewMap returns an empty Map.
func NewMap() *Map {
	return &Map{files: map[string]*mapFile{}, versions: map[string][]Version{}, deleted: map[string]time.Time{}}
}

// Versions returns the saved versions of the file at path, newest first,
// and whether the file is deleted.
func (m *Map) Versions(path string) ([]Version, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	_, gone := m.deleted[path]
	return slices.Clone(m.versions[path]), gone
}

// Files implements [memory.Store].
func (m *Map) Files() ([]memory.Info, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]memory.Info, 0, len(m.files))
	for p, f := range m.files {
		out = append(out, memory.Info{Path: p, Size: int64(len(f.text)), Accessed: f.accessed})
	}
	slices.SortFunc(out, func(a, b memory.Info) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Read implements [memory.Store].
func (m *Map) Read(path string) (memory.File, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	f := m.files[path]
	if f == nil {
		return memory.File{}, fmt.Errorf("memorytest: read %s: %w", path, fs.ErrNotExist)
	}
	return memory.File{Info: memory.Info{Path: path, Size: int64(len(f.text)), Accessed: f.accessed},
		Text: slices.Clone(f.text), Rev: m.versions[path][0].Rev}, nil
}

// Touch implements [memory.Store].
func (m *Map) Touch(path string, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.files[path]; f != nil {
		f.accessed = now
	}
	return nil
}

// Lock implements [memory.Store].
func (m *Map) Lock() (memory.Tx, error) {
	m.lock.Lock()
	return &mapTx{m: m}, nil
}

// keepVersions is how many versions of a file a Map keeps.
const keepVersions = 10

type mapTx struct {
	m    *Map
	done bool
}

func (t *mapTx) Unlock() {
	if !t.done {
		t.done = true
		t.m.lock.Unlock()
	}
}

func (t *mapTx) Write(path string, text []byte, now time.Time) (int64, error) {
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	var rev int64 = 1
	if vs := m.versions[path]; len(vs) > 0 {
		rev = vs[0].Rev + 1
	}
	m.files[path] = &mapFile{text: slices.Clone(text), accessed: now}
	vs := append([]Version{{Rev: rev, Text: string(text), Time: now}}, m.versions[path]...)
	m.versions[path] = vs[:min(len(vs), keepVersions)]
	delete(m.deleted, path)
	return rev, nil
}

// under lists the files of folder dir, or the file path.
func (m *Map) under(path string, dir bool) []string {
	if !dir {
		if m.files[path] == nil {
			return nil
		}
		return []string{path}
	}
	var out []string
	for p := range m.files {
		if strings.HasPrefix(p, path+"/") {
			out = append(out, p)
		}
	}
	return out
}

func (t *mapTx) Remove(path string, dir bool, now time.Time) error {
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.under(path, dir)
	if len(ps) == 0 {
		return fmt.Errorf("memorytest: remove %s: %w", path, fs.ErrNotExist)
	}
	for _, p := range ps {
		delete(m.files, p)
		m.deleted[p] = now
	}
	return nil
}

func (t *mapTx) Rename(from, to string, dir bool, now time.Time) error {
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	ps := m.under(from, dir)
	if len(ps) == 0 {
		return fmt.Errorf("memorytest: rename %s: %w", from, fs.ErrNotExist)
	}
	for _, p := range ps {
		q := to + p[len(from):]
		m.files[q] = m.files[p]
		m.versions[q] = m.versions[p]
		delete(m.files, p)
		delete(m.versions, p)
		delete(m.deleted, q)
	}
	return nil
}
