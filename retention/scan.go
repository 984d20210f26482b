package retention

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// File is one stored file.
type File struct {
	Path         string // absolute
	layout.Class        // kind and run
	Size         int64
	ModTime      time.Time
}

// Inventory is what [Scan] found in a memory_dir.
type Inventory struct {
	Root  string
	Files []File
	// Complete is false when the scan stopped early (its context ended):
	// a plan then removes only what is old, never to reach a size.
	Complete bool
}

// Bytes returns the size of every file, by kind.
func (inv *Inventory) Bytes() map[string]int64 {
	m := map[string]int64{}
	for _, f := range inv.Files {
		m[f.Kind] += f.Size
	}
	return m
}

// Counts returns the number of files by kind.
func (inv *Inventory) Counts() map[string]int {
	m := map[string]int{}
	for _, f := range inv.Files {
		m[f.Kind]++
	}
	return m
}

// Scan lists every regular file (and symbolic link, by its own size) under
// memoryDir, classified by the layout. It walks memory_dir's [os.Root]
// (package memdir), so nothing outside memory_dir is listed, through a
// link planted anywhere in it or otherwise. A missing memoryDir is empty.
// When ctx ends the scan stops and the inventory is not Complete.
func Scan(ctx context.Context, memoryDir string) (*Inventory, error) {
	inv := &Inventory{Root: memoryDir, Complete: true}
	root, err := memdir.At(memoryDir).OpenRoot()
	if errors.Is(err, fs.ErrNotExist) {
		return inv, nil // no memory_dir yet
	}
	if err != nil {
		return inv, err
	}
	defer root.Close()
	fsys := root.FS()
	runs := map[string]string{} // interned run paths
	for i, scope := range layout.Scopes(fsys) {
		base := filepath.Join(memoryDir, filepath.FromSlash(scope)) // the tree's layout.Tree.Base
		err := fs.WalkDir(fsys, scope, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed meanwhile
				}
				return err
			}
			if d.IsDir() {
				if p == layout.OwnersDir && i == 0 {
					return fs.SkipDir // each owner is a scope of its own
				}
				if len(inv.Files)%1024 == 0 && ctx.Err() != nil {
					inv.Complete = false
					return fs.SkipAll
				}
				return nil
			}
			rel := p
			if scope != "." {
				rel = p[len(scope)+1:]
			}
			if rel == layout.LockFile {
				return nil
			}
			fi, err := d.Info()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			c := layout.Classify(base, rel)
			if c.Run != "" {
				if r, ok := runs[c.Run]; ok {
					c.Run = r
				} else {
					runs[c.Run] = c.Run
				}
			}
			inv.Files = append(inv.Files, File{Path: filepath.Join(memoryDir, filepath.FromSlash(path.Clean(p))), Class: c, Size: fi.Size(), ModTime: fi.ModTime()})
			if len(inv.Files)%4096 == 0 && ctx.Err() != nil {
				inv.Complete = false
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return inv, err
		}
		if !inv.Complete {
			break
		}
	}
	return inv, nil
}
