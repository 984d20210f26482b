package pad

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

const historyDir = layout.PadHistoryDir

// Version is one saved version of the pad file, in .history/ or in the
// Redis history list.
type Version struct {
	N    int       // 1 = newest; what Diff, Restore and the CLI take
	Time time.Time // when it was saved
	Size int64
	Path string // the version's file; "" on Redis
}

// listHistory returns the saved versions, newest first. File names are the
// save time in Unix nanoseconds, zero-padded so they also sort by name.
func listHistory(d memdir.Dir, ext string) ([]Version, error) {
	entries, err := d.ReadDir(historyDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pad: list history: %w", err)
	}
	type item struct {
		seq int64
		v   Version
	}
	var items []item
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ext) || layout.IsTemp(name) {
			continue
		}
		seq, err := strconv.ParseInt(strings.TrimSuffix(name, ext), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		items = append(items, item{seq, Version{Time: time.Unix(0, seq).UTC(), Size: info.Size(), Path: d.Join(filepath.Join(historyDir, name))}})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].seq > items[j].seq })
	out := make([]Version, len(items))
	for i, it := range items {
		it.v.N = i + 1
		out[i] = it.v
	}
	return out, nil
}

// addHistory saves data as the newest version and prunes to keep versions.
// The caller holds the pad lock.
func addHistory(d memdir.Dir, ext string, data []byte, keep int, now time.Time) error {
	versions, err := listHistory(d, ext)
	if err != nil {
		return err
	}
	seq := now.UnixNano()
	if len(versions) > 0 {
		// Names must stay strictly increasing even if the clock steps back.
		if last := versions[0].Time.UnixNano(); seq <= last {
			seq = last + 1
		}
	}
	// The write creates .history (0700) if missing.
	if err := writeAtomic(d, historyName(fmt.Sprintf("%020d%s", seq, ext)), data); err != nil {
		return err
	}
	// versions excludes the one just written, so keep-1 of them survive.
	for i := keep - 1; i < len(versions); i++ {
		if i < 0 {
			continue
		}
		_ = d.Remove(historyName(filepath.Base(versions[i].Path)))
	}
	return nil
}

// historyName is the name in the pad directory of the version file base.
func historyName(base string) string { return filepath.Join(historyDir, base) }
