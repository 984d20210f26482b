package pad

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// MemoryOptions configures a pad's memory files ([Pad.Memory]). The zero
// value of every field means its default.
type MemoryOptions struct {
	// History is how many versions of each file are kept; 0 means the
	// pad's [Options.History].
	History int
	// Deleted is how many deleted files keep their versions (the most
	// recently deleted; older ones are forgotten); 0 means 200.
	Deleted int
}

// DefaultMemoryDeleted is [MemoryOptions.Deleted]'s default.
const DefaultMemoryDeleted = 200

// Memory returns the pad's memory files, package memory's /memories: a
// [memory.Store] on the pad's own storage. On a directory they are files
// below memories/ (a person may read and edit them; an edit is seen as a
// revision of its own) with their versions in .history/memories/; on
// Redis, fields of the pad's memory hash with a version list per file.
// They share the pad's lock (every change is one read-check-write under
// it, fenced on Redis), its owner and scope, its TTL and its deletion
// (`pad delete`, `run delete`). Each file keeps its last o.History
// versions, a deleted file's included, for `scratchpad-mcp pad
// history|diff|restore --memory PATH`.
func (p *Pad) Memory(o MemoryOptions) memory.Store {
	if o.History <= 0 {
		o.History = p.opts.History
	}
	if o.Deleted <= 0 {
		o.Deleted = DefaultMemoryDeleted
	}
	return &memStore{p: p, b: p.store.(memBackend), o: o}
}

// memVersion is one saved version of a memory file.
type memVersion struct {
	Rev  int64
	Time time.Time
	Size int64
	read func() ([]byte, error)
}

// memBackend is what a store offers memory files. Both stores implement
// it; the revision rules are [memStore]'s, so both count alike.
type memBackend interface {
	// memFiles lists the files, sorted by path, skipping anything that
	// is not a regular file reached without a link.
	memFiles() ([]memory.Info, error)
	// memRead returns a file's content; ok is false when there is no
	// file at path (a folder is none). A link on the way is
	// [memory.ErrLink].
	memRead(path string) (text []byte, accessed time.Time, ok bool, err error)
	// memVersions lists path's saved versions, newest first (limit: at
	// most that many; 0: all), and whether the file was deleted.
	memVersions(path string, limit int) (vs []memVersion, deleted bool, err error)
	// memTouch records a read of path at now.
	memTouch(path string, now time.Time) error

	// The changes, under the pad's lock lk.
	//
	// memPut writes path: prev (when not nil) is saved first, at revision
	// rev-1 (content found changed by hand), then text replaces the file
	// and is saved as revision rev; versions past keep are dropped.
	memPut(lk heldLock, path string, prev []byte, text []byte, rev int64, keep int, now time.Time) error
	// memRemove removes the files at paths (with dir != "", the folder
	// dir, which holds exactly them), each first saving its content in
	// unsaved (by path) as the revision unsavedRev, and marks them
	// deleted; only the keepDeleted most recent deleted files keep their
	// versions.
	memRemove(lk heldLock, paths []string, dir string, unsaved map[string]memUnsaved, keepDeleted int, now time.Time) error
	// memRename moves from to to (with dir, a folder whose files are
	// moves' sources), the versions of each moved file with it, after
	// saving unsaved content as memRemove does.
	memRename(lk heldLock, from, to string, dir bool, moves [][2]string, unsaved map[string]memUnsaved, now time.Time) error
}

// memUnsaved is a file's content that no version holds yet (an edit by
// hand), to be saved at rev.
type memUnsaved struct {
	text []byte
	rev  int64
}

// memStore implements [memory.Store] on a pad's [memBackend].
type memStore struct {
	p *Pad
	b memBackend
	o MemoryOptions
}

func (s *memStore) Files() ([]memory.Info, error) { return s.b.memFiles() }

// Read gives the file its revision: the newest version's when that holds
// the file's content, one more when the content was changed by hand (the
// next write saves it as that revision first).
func (s *memStore) Read(path string) (memory.File, error) {
	text, accessed, ok, err := s.b.memRead(path)
	if err != nil {
		return memory.File{}, err
	}
	if !ok {
		return memory.File{}, fmt.Errorf("pad: memory %s: %w", path, fs.ErrNotExist)
	}
	rev, _, err := s.revision(path, text)
	if err != nil {
		return memory.File{}, err
	}
	return memory.File{Info: memory.Info{Path: path, Size: int64(len(text)), Accessed: accessed}, Text: text, Rev: rev}, nil
}

// revision is the revision of path holding text (its live content):
// the newest version's when it holds text, else one more, with unsaved
// true.
func (s *memStore) revision(path string, text []byte) (rev int64, unsaved bool, err error) {
	vs, _, err := s.b.memVersions(path, 1)
	if err != nil || len(vs) == 0 {
		return 1, true, err
	}
	data, err := vs[0].read()
	if err != nil {
		return 0, false, err
	}
	if bytes.Equal(data, text) {
		return vs[0].Rev, false, nil
	}
	return vs[0].Rev + 1, true, nil
}

func (s *memStore) Touch(path string, now time.Time) error { return s.b.memTouch(path, now) }

func (s *memStore) Lock() (memory.Tx, error) {
	lk, err := s.p.store.lock()
	if err != nil {
		return nil, err
	}
	return &memTx{s: s, lk: lk}, nil
}

// memTx is a held lock of a memStore.
type memTx struct {
	s    *memStore
	lk   heldLock
	done bool
}

func (t *memTx) Unlock() {
	if !t.done {
		t.done = true
		t.lk.unlock()
	}
}

func (t *memTx) Write(path string, text []byte, now time.Time) (int64, error) {
	s := t.s
	cur, _, live, err := s.b.memRead(path)
	if err != nil {
		return 0, err
	}
	vs, _, err := s.b.memVersions(path, 1)
	if err != nil {
		return 0, err
	}
	var base int64
	var newest []byte
	if len(vs) > 0 {
		base = vs[0].Rev
		if newest, err = vs[0].read(); err != nil {
			return 0, err
		}
	}
	var prev []byte
	if live && (len(vs) == 0 || !bytes.Equal(newest, cur)) {
		prev, base = cur, base+1 // a hand edit (or a file without versions): saved first
		if prev == nil {
			prev = []byte{}
		}
	}
	rev := base + 1
	if err := s.b.memPut(t.lk, path, prev, text, rev, s.o.History, now); err != nil {
		return 0, err
	}
	return rev, nil
}

// unsaved finds, among paths, the files whose content no version holds.
func (t *memTx) unsaved(paths []string) (map[string]memUnsaved, error) {
	out := map[string]memUnsaved{}
	for _, p := range paths {
		text, _, ok, err := t.s.b.memRead(p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		rev, unsaved, err := t.s.revision(p, text)
		if err != nil {
			return nil, err
		}
		if unsaved {
			out[p] = memUnsaved{text: text, rev: rev}
		}
	}
	return out, nil
}

// under lists the files of the folder dir.
func (t *memTx) under(dir string) ([]string, error) {
	files, err := t.s.b.memFiles()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f.Path, dir+"/") {
			out = append(out, f.Path)
		}
	}
	return out, nil
}

func (t *memTx) Remove(path string, dir bool, now time.Time) error {
	paths, folder := []string{path}, ""
	if dir {
		var err error
		if paths, err = t.under(path); err != nil {
			return err
		}
		folder = path
	} else if _, _, ok, err := t.s.b.memRead(path); err != nil || !ok {
		if err == nil {
			err = fs.ErrNotExist
		}
		return fmt.Errorf("pad: memory %s: %w", path, err)
	}
	unsaved, err := t.unsaved(paths)
	if err != nil {
		return err
	}
	return t.s.b.memRemove(t.lk, paths, folder, unsaved, t.s.o.Deleted, now)
}

func (t *memTx) Rename(from, to string, dir bool, now time.Time) error {
	paths := []string{from}
	if dir {
		var err error
		if paths, err = t.under(from); err != nil {
			return err
		}
	}
	moves := make([][2]string, len(paths))
	for i, p := range paths {
		moves[i] = [2]string{p, to + p[len(from):]}
	}
	unsaved, err := t.unsaved(paths)
	if err != nil {
		return err
	}
	return t.s.b.memRename(t.lk, from, to, dir, moves, unsaved, now)
}

// memParents are the folders on the way to path, nearest to /memories
// first ("a", "a/b" for "a/b/c.md").
func memParents(path string) []string {
	var out []string
	for i, c := range path {
		if c == '/' {
			out = append(out, path[:i])
		}
	}
	return out
}

// sortedPaths returns the keys of m, sorted.
func sortedPaths[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// sortInfos sorts files by path.
func sortInfos(fs []memory.Info) {
	slices.SortFunc(fs, func(a, b memory.Info) int { return strings.Compare(a.Path, b.Path) })
}
