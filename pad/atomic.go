package pad

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// beforeRename, when set by a test, runs after the temp file is written and
// synced and before it is renamed into place: the crash window.
var beforeRename func(tmp string) error

// writeAtomic replaces name in d with data through memdir's atomic write
// (temp file in the same folder, fsync, rename, fsync of the folder): a
// crash at any point leaves either the old file or the new one, never a
// mix, and nothing is written outside memory_dir.
func writeAtomic(d memdir.Dir, name string, data []byte) error {
	if beforeRename == nil {
		if err := d.WriteFile(name, data); err != nil {
			return fmt.Errorf("pad: write %s: %w", name, err)
		}
		return nil
	}
	tmp, err := d.WriteTemp(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	if err != nil {
		return fmt.Errorf("pad: write %s: %w", name, err)
	}
	if err := beforeRename(d.Join(tmp)); err != nil {
		_ = d.Remove(tmp)
		return err
	}
	if err := d.Commit(tmp, name); err != nil {
		return fmt.Errorf("pad: write %s: %w", name, err)
	}
	return nil
}

// removeTemps deletes temp files left by a crash. The caller holds the pad
// lock, so no live writer owns one of them.
func removeTemps(d memdir.Dir) (int, error) {
	n := 0
	for _, sub := range []string{"", historyDir, snapshotDir} {
		entries, err := d.ReadDir(sub)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return n, fmt.Errorf("pad: scan for temp files: %w", err)
		}
		for _, e := range entries {
			if layout.IsTemp(e.Name()) && !e.IsDir() {
				if err := d.Remove(filepath.Join(sub, e.Name())); err == nil {
					n++
				}
			}
		}
	}
	return n, nil
}
