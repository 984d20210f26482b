package pad

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// beforeRename, when set by a test, runs after the temp file is written and
// synced and before it is renamed into place: the crash window.
var beforeRename func(tmp string) error

// writeAtomic replaces path with data: temp file in the same directory,
// fsync, rename, fsync the directory. A crash at any point leaves either the
// old file or the new one, never a mix.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, layout.TempPattern(filepath.Base(path)))
	if err != nil {
		return fmt.Errorf("pad: create temp: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("pad: write temp: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("pad: fsync temp: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pad: close temp: %w", err)
	}
	if beforeRename != nil {
		if err := beforeRename(tmp); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("pad: rename: %w", err)
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("pad: open dir for fsync: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !isUnsupportedSync(err) {
		return fmt.Errorf("pad: fsync dir: %w", err)
	}
	return nil
}

// isUnsupportedSync tolerates file systems that cannot fsync a directory.
func isUnsupportedSync(err error) bool {
	return strings.Contains(err.Error(), "invalid argument") || strings.Contains(err.Error(), "not supported")
}

// removeTemps deletes temp files left by a crash. The caller holds the pad
// lock, so no live writer owns one of them.
func removeTemps(dir string) (int, error) {
	n := 0
	for _, sub := range []string{dir, filepath.Join(dir, historyDir), filepath.Join(dir, snapshotDir)} {
		entries, err := os.ReadDir(sub)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return n, fmt.Errorf("pad: scan for temp files: %w", err)
		}
		for _, e := range entries {
			if layout.IsTemp(e.Name()) && !e.IsDir() {
				if err := os.Remove(filepath.Join(sub, e.Name())); err == nil {
					n++
				}
			}
		}
	}
	return n, nil
}
