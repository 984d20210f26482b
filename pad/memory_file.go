package pad

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// A directory pad keeps memory files as files below memories/, named as
// the model names them, and each file's versions in
// .history/memories/<32 hex digits of its path's SHA-256>/: one file per
// revision (<20 digits>, its mtime the save time), .path (the file's path,
// for a person) and, once the file is deleted, .deleted. Every name is
// reached through the pad's memdir.Dir, so nothing leaves memory_dir; a
// symbolic link below memories/ is neither followed nor replaced.

// memDir is the folder of the memory files.
func (s *fileStore) memDir() memdir.Dir { return s.d.Sub(layout.PadMemoriesDir) }

// memHist is the folder of path's versions.
func (s *fileStore) memHist(path string) memdir.Dir {
	return s.d.Sub(filepath.FromSlash(layout.PadMemoriesHistoryDir)).Sub(layout.PadMemoryHistoryName(path))
}

// memWay checks the way to path below memories/ (memories/ itself
// included): ErrLink for a symbolic link on it, found false when a
// folder on it is missing or a file. With file, path itself is checked
// too and must be a regular file.
func (s *fileStore) memWay(path string, file bool) (found bool, err error) {
	names := memParents(path)
	if file {
		names = append(names, path)
	}
	fi, err := s.d.Lstat(layout.PadMemoriesDir)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return false, fmt.Errorf("pad: memory %s: %w", path, memory.ErrLink)
	}
	if err != nil {
		return false, memMissing(path, err)
	}
	for i, n := range names {
		fi, err := s.memDir().Lstat(filepath.FromSlash(n))
		switch {
		case err != nil:
			return false, memMissing(path, err)
		case fi.Mode()&fs.ModeSymlink != 0:
			return false, fmt.Errorf("pad: memory %s: %w", path, memory.ErrLink)
		case i < len(memParents(path)) && !fi.IsDir():
			return false, nil
		case file && i == len(names)-1 && !fi.Mode().IsRegular():
			return false, nil
		}
	}
	return true, nil
}

// memMissing is nil for a name that does not exist (or runs through a
// file), err otherwise.
func memMissing(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return fmt.Errorf("pad: memory %s: %w", path, err)
}

func (s *fileStore) memFiles() ([]memory.Info, error) {
	switch fi, err := s.d.Lstat(layout.PadMemoriesDir); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("pad: memory: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("pad: memory: %s: %w", layout.PadMemoriesDir, memory.ErrLink)
	case !fi.IsDir():
		return nil, nil
	}
	var out []memory.Info
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := s.memDir().ReadDir(filepath.FromSlash(dir))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return fmt.Errorf("pad: memory: list %s: %w", dir, err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") || e.Type()&fs.ModeSymlink != 0 {
				continue // temporary files, and what the memory tool does not follow
			}
			rel := name
			if dir != "" {
				rel = dir + "/" + name
			}
			switch {
			case e.IsDir() && depth < memory.MaxDepth:
				if err := walk(rel, depth+1); err != nil {
					return err
				}
			case e.Type().IsRegular():
				if fi, err := e.Info(); err == nil {
					out = append(out, memory.Info{Path: rel, Size: fi.Size(), Accessed: fi.ModTime()})
				}
			}
		}
		return nil
	}
	if err := walk("", 1); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b memory.Info) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

func (s *fileStore) memRead(path string) ([]byte, time.Time, bool, error) {
	if ok, err := s.memWay(path, true); !ok || err != nil {
		return nil, time.Time{}, false, err
	}
	name := filepath.FromSlash(path)
	fi, err := s.memDir().Lstat(name)
	if err != nil {
		return nil, time.Time{}, false, memMissing(path, err)
	}
	data, err := s.memDir().ReadFile(name)
	if err != nil {
		return nil, time.Time{}, false, memMissing(path, err)
	}
	return data, fi.ModTime(), true, nil
}

func (s *fileStore) memVersions(path string, limit int) ([]memVersion, bool, error) {
	h := s.memHist(path)
	entries, err := h.ReadDir("")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("pad: memory %s: versions: %w", path, err)
	}
	deleted := false
	var vs []memVersion
	for i := len(entries) - 1; i >= 0; i-- { // ReadDir sorts by name: newest last
		e := entries[i]
		if e.Name() == layout.PadMemoryDeletedFile {
			deleted = true
		}
		rev, ok := layout.ParsePadMemoryVersionName(e.Name())
		if !ok || !e.Type().IsRegular() || limit > 0 && len(vs) == limit {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		name := e.Name()
		vs = append(vs, memVersion{Rev: rev, Time: fi.ModTime(), Size: fi.Size(), read: func() ([]byte, error) {
			data, err := h.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("pad: memory %s: read version %d: %w", path, rev, err)
			}
			return data, nil
		}})
	}
	return vs, deleted, nil
}

func (s *fileStore) memTouch(path string, now time.Time) error {
	if ok, err := s.memWay(path, true); !ok || err != nil {
		return err
	}
	return s.memDir().Chtimes(filepath.FromSlash(path), now, now)
}

// memSave saves text as revision rev of path, its time now, and drops
// versions past keep (keep 0: none dropped).
func (s *fileStore) memSave(path string, text []byte, rev int64, keep int, now time.Time) error {
	h := s.memHist(path)
	if _, err := h.Lstat(layout.PadMemoryPathFile); errors.Is(err, fs.ErrNotExist) {
		if err := writeAtomic(h, layout.PadMemoryPathFile, []byte(path+"\n")); err != nil {
			return err
		}
	}
	name := layout.PadMemoryVersionName(rev)
	if err := writeAtomic(h, name, text); err != nil {
		return err
	}
	if err := h.Chtimes(name, now, now); err != nil {
		return fmt.Errorf("pad: memory %s: %w", path, err)
	}
	if keep <= 0 {
		return nil
	}
	vs, _, err := s.memVersions(path, 0)
	if err != nil {
		return err
	}
	for _, v := range vs[min(keep, len(vs)):] {
		_ = h.Remove(layout.PadMemoryVersionName(v.Rev))
	}
	return nil
}

// The order of memPut is the one a crash can survive: a hand edit's
// content is saved before it is replaced; a crash after the file is
// written and before its version is leaves content that no version holds,
// which the next read counts as revision rev and the next write saves.
func (s *fileStore) memPut(_ heldLock, path string, prev, text []byte, rev int64, keep int, now time.Time) error {
	if _, err := s.memWay(path, false); err != nil {
		return err
	}
	if prev != nil {
		if err := s.memSave(path, prev, rev-1, 0, now); err != nil {
			return err
		}
	}
	name := filepath.FromSlash(path)
	if err := writeAtomic(s.memDir(), name, text); err != nil {
		return err
	}
	if err := s.memDir().Chtimes(name, now, now); err != nil {
		return fmt.Errorf("pad: memory %s: %w", path, err)
	}
	if err := s.memSave(path, text, rev, keep, now); err != nil {
		return err
	}
	if err := s.memHist(path).Remove(layout.PadMemoryDeletedFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("pad: memory %s: %w", path, err)
	}
	return nil
}

// memMarkDeleted saves unsaved content and marks path deleted at now.
func (s *fileStore) memMarkDeleted(path string, unsaved map[string]memUnsaved, now time.Time) error {
	if u, ok := unsaved[path]; ok {
		if err := s.memSave(path, u.text, u.rev, 0, now); err != nil {
			return err
		}
	}
	h := s.memHist(path)
	if err := writeAtomic(h, layout.PadMemoryDeletedFile, []byte(now.UTC().Format(time.RFC3339Nano)+"\n")); err != nil {
		return err
	}
	if err := h.Chtimes(layout.PadMemoryDeletedFile, now, now); err != nil {
		return fmt.Errorf("pad: memory %s: %w", path, err)
	}
	return nil
}

func (s *fileStore) memRemove(_ heldLock, paths []string, dir string, unsaved map[string]memUnsaved, keepDeleted int, now time.Time) error {
	target := dir
	if dir == "" {
		target = paths[0]
	}
	if _, err := s.memWay(target, false); err != nil {
		return err
	}
	for _, p := range paths {
		if err := s.memMarkDeleted(p, unsaved, now); err != nil {
			return err
		}
	}
	var err error
	if dir != "" {
		err = s.memDir().RemoveAll(filepath.FromSlash(dir))
	} else {
		err = s.memDir().Remove(filepath.FromSlash(target))
	}
	if err != nil {
		return fmt.Errorf("pad: memory %s: remove: %w", target, err)
	}
	s.memPrune(target)
	return s.memForget(keepDeleted)
}

// memPrune removes the folders on path's way that are left empty: a
// folder exists only while it holds a file.
func (s *fileStore) memPrune(path string) {
	ps := memParents(path)
	for i := len(ps) - 1; i >= 0; i-- {
		if s.memDir().Remove(filepath.FromSlash(ps[i])) != nil {
			return // not empty, or gone
		}
	}
}

// memForget drops the versions of deleted files past the keep most
// recently deleted (by their .deleted's mtime). A file that is there
// again (a crash between marking and writing) is not forgotten.
func (s *fileStore) memForget(keep int) error {
	hd := s.d.Sub(filepath.FromSlash(layout.PadMemoriesHistoryDir))
	entries, err := hd.ReadDir("")
	if err != nil {
		return nil // nothing to forget, or nothing this can do
	}
	type gone struct {
		name string
		at   time.Time
	}
	var deleted []gone
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if fi, err := hd.Lstat(filepath.Join(e.Name(), layout.PadMemoryDeletedFile)); err == nil {
			deleted = append(deleted, gone{e.Name(), fi.ModTime()})
		}
	}
	if len(deleted) <= keep {
		return nil
	}
	slices.SortFunc(deleted, func(a, b gone) int { return b.at.Compare(a.at) })
	for _, g := range deleted[keep:] {
		if data, err := hd.ReadFile(filepath.Join(g.name, layout.PadMemoryPathFile)); err == nil {
			if _, _, live, _ := s.memRead(strings.TrimSuffix(string(data), "\n")); live {
				continue
			}
		}
		if err := hd.RemoveAll(g.name); err != nil {
			return fmt.Errorf("pad: memory: forget deleted versions: %w", err)
		}
	}
	return nil
}

// memRename renames the file or folder in one rename, then moves each
// moved file's versions (one rename each; a crash between them leaves a
// file whose versions stayed with its old path, so its revisions start
// over).
func (s *fileStore) memRename(_ heldLock, from, to string, _ bool, moves [][2]string, unsaved map[string]memUnsaved, now time.Time) error {
	if _, err := s.memWay(from, false); err != nil {
		return err
	}
	if _, err := s.memWay(to, true); err != nil { // a link at to is not replaced
		return err
	}
	for _, p := range sortedPaths(unsaved) {
		u := unsaved[p]
		if err := s.memSave(p, u.text, u.rev, 0, now); err != nil {
			return err
		}
	}
	if ps := memParents(to); len(ps) > 0 {
		if err := s.memDir().Sub(filepath.FromSlash(ps[len(ps)-1])).Make(); err != nil {
			return fmt.Errorf("pad: memory %s: %w", to, err)
		}
	}
	if err := s.memDir().Rename(filepath.FromSlash(from), filepath.FromSlash(to)); err != nil {
		return fmt.Errorf("pad: memory: rename %s to %s: %w", from, to, err)
	}
	hd := s.d.Sub(filepath.FromSlash(layout.PadMemoriesHistoryDir))
	for _, m := range moves {
		oldH, newH := layout.PadMemoryHistoryName(m[0]), layout.PadMemoryHistoryName(m[1])
		if _, err := hd.Lstat(oldH); err != nil {
			continue // no versions (a file put there by hand)
		}
		// A deleted file's versions at the new path are superseded.
		if err := hd.RemoveAll(newH); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pad: memory %s: %w", m[1], err)
		}
		if err := hd.Rename(oldH, newH); err != nil {
			return fmt.Errorf("pad: memory: move versions of %s: %w", m[0], err)
		}
		if err := writeAtomic(hd.Sub(newH), layout.PadMemoryPathFile, []byte(m[1]+"\n")); err != nil {
			return err
		}
	}
	s.memPrune(from)
	return nil
}

// memCleanTemps removes the temporary files a crash left below
// memories/ and in the memory files' version folders. The caller holds
// the pad's locks.
func (s *fileStore) memCleanTemps() error {
	var walk func(d memdir.Dir, depth int) error
	walk = func(d memdir.Dir, depth int) error {
		entries, err := d.ReadDir("")
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("pad: memory: scan for temp files: %w", err)
		}
		for _, e := range entries {
			switch {
			case e.Type()&fs.ModeSymlink != 0:
			case e.IsDir() && depth < memory.MaxDepth+1:
				if err := walk(d.Sub(e.Name()), depth+1); err != nil {
					return err
				}
			case layout.IsTemp(e.Name()):
				_ = d.Remove(e.Name())
			}
		}
		return nil
	}
	if err := walk(s.memDir(), 0); err != nil {
		return err
	}
	return walk(s.d.Sub(filepath.FromSlash(layout.PadMemoriesHistoryDir)), memory.MaxDepth)
}
