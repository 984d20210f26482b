package pad

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// snapshotDir holds a directory pad's snapshots, one <name>.json each.
const snapshotDir = layout.PadSnapshotDir

func (s *fileStore) readKeys() ([]byte, bool, error) {
	data, err := s.d.ReadFile(keysFile)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("pad: read %s: %w", keysFile, err)
	}
	return data, true, nil
}

// keysHistExt names the keys' versions in .history/, beside the
// document's (<unix ns>.md or .json, which this suffix never matches as a
// version of theirs).
const keysHistExt = layout.PadKeysHistoryExt

// writeKeys writes keys.json atomically, then saves the version (as
// commit does the document); the change counter inside it (rev) is what
// the stamp looks at.
func (s *fileStore) writeKeys(_ heldLock, data []byte, hist *histPush) error {
	if hist != nil {
		if err := s.d.Sub(historyDir).Make(); err != nil { // as commit: refused before anything is written
			return fmt.Errorf("pad: history: %w", err)
		}
	}
	if err := writeAtomic(s.d, keysFile, data); err != nil {
		return err
	}
	if hist != nil {
		return addHistory(s.d, keysHistExt, data, hist.keep, hist.now)
	}
	return nil
}

func (s *fileStore) keysHistory(limit int) ([]histItem, error) {
	vs, err := listHistory(s.d, keysHistExt)
	if err != nil {
		return nil, err
	}
	return fileHistItems(s.d, vs, limit), nil
}

// fileHistItems are history items reading the version files in d.
func fileHistItems(d memdir.Dir, vs []Version, limit int) []histItem {
	if limit > 0 && len(vs) > limit {
		vs = vs[:limit]
	}
	out := make([]histItem, len(vs))
	for i, v := range vs {
		name := historyName(filepath.Base(v.Path))
		out[i] = histItem{Version: v, read: func() ([]byte, error) {
			data, err := d.ReadFile(name)
			if err != nil {
				return nil, fmt.Errorf("pad: read version: %w", err)
			}
			return data, nil
		}}
	}
	return out
}

// keysRev is the keys' change counter for the stamp: a sliding renewal
// rewrites keys.json without changing it.
func (s *fileStore) keysRev() string {
	data, err := s.d.ReadFile(keysFile)
	if err != nil {
		return "-"
	}
	var ks struct {
		Rev int64 `json:"rev"`
	}
	if json.Unmarshal(data, &ks) != nil {
		return fmt.Sprintf("?%d", len(data))
	}
	return fmt.Sprint(ks.Rev)
}

func (s *fileStore) readSnapshot(name string) ([]byte, bool, error) {
	data, err := s.d.ReadFile(snapshotFile(name))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("pad: read snapshot: %w", err)
	}
	return data, true, nil
}

// writeSnapshot saves a snapshot; the write creates .snapshots (0700) if
// missing.
func (s *fileStore) writeSnapshot(_ heldLock, name string, data []byte) error {
	return writeAtomic(s.d, snapshotFile(name), data)
}

// snapshotFile is the file of snapshot name in the pad directory.
func snapshotFile(name string) string { return filepath.Join(snapshotDir, name+".json") }

func (s *fileStore) listSnapshots() ([]string, error) {
	entries, err := s.d.ReadDir(snapshotDir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pad: list snapshots: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || layout.IsTemp(n) || !strings.HasSuffix(n, ".json") {
			continue
		}
		if n = strings.TrimSuffix(n, ".json"); checkSnapshotName(n) == "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *fileStore) quarantineKeys(_ heldLock, now time.Time) (string, error) {
	broken := s.brokenName(keysFile, now)
	if err := s.d.Rename(keysFile, broken); err != nil {
		return "", fmt.Errorf("pad: quarantine %s: %w", keysFile, err)
	}
	return s.d.Join(broken), nil
}
