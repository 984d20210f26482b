package retention

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
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
// memoryDir, classified by the layout. A missing memoryDir is empty. When
// ctx ends the scan stops and the inventory is not Complete.
func Scan(ctx context.Context, memoryDir string) (*Inventory, error) {
	inv := &Inventory{Root: memoryDir, Complete: true}
	runs := map[string]string{} // interned run paths
	for i, scope := range layout.Scopes(memoryDir) {
		err := filepath.WalkDir(scope, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // removed meanwhile, or no memory_dir yet
				}
				return err
			}
			if d.IsDir() {
				if p == filepath.Join(scope, layout.OwnersDir) && i == 0 {
					return fs.SkipDir // each owner is a scope of its own
				}
				if len(inv.Files)%1024 == 0 && ctx.Err() != nil {
					inv.Complete = false
					return fs.SkipAll
				}
				return nil
			}
			rel, err := filepath.Rel(scope, p)
			if err != nil {
				return err
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
			c := layout.Classify(scope, rel)
			if c.Run != "" {
				if r, ok := runs[c.Run]; ok {
					c.Run = r
				} else {
					runs[c.Run] = c.Run
				}
			}
			inv.Files = append(inv.Files, File{Path: p, Class: c, Size: fi.Size(), ModTime: fi.ModTime()})
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
