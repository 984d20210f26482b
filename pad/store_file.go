package pad

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// fileStore keeps a pad in a directory: pad.md or pad.json, the ledger
// entries.jsonl, .history/, .notice, and flock(2) locks on sidecar files.
type fileStore struct {
	path string // the pad directory
	file string // mdFile or jsonFile
	ext  string // extension of history files
}

func (s *fileStore) location() string { return s.path }
func (s *fileStore) dir() string      { return s.path }
func (s *fileStore) docPath() string  { return filepath.Join(s.path, s.file) }

func (s *fileStore) lock() (heldLock, error) {
	if err := os.MkdirAll(s.path, 0o755); err != nil {
		return nil, fmt.Errorf("pad: create pad dir: %w", err)
	}
	return lockFile(filepath.Join(s.path, lockName))
}

func (s *fileStore) readDoc() ([]byte, bool, error) {
	raw, err := os.ReadFile(s.docPath())
	if err != nil {
		if os.IsNotExist(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("pad: read %s: %w", s.file, err)
	}
	return raw, true, nil
}

// commit keeps the order a crash can survive: the hand edit goes to
// history before the new file replaces it.
func (s *fileStore) commit(_ heldLock, prev, next []byte, pushNext bool, keep int, now time.Time) error {
	if prev != nil {
		if err := addHistory(s.path, s.ext, prev, keep, now); err != nil {
			return err
		}
	}
	if err := writeAtomic(s.docPath(), next); err != nil {
		return err
	}
	if pushNext {
		return addHistory(s.path, s.ext, next, keep, now)
	}
	return nil
}

func (s *fileStore) quarantine(_ heldLock, now time.Time) (string, []byte, error) {
	path := s.docPath()
	broken := fmt.Sprintf("%s.broken-%d", path, now.Unix())
	for i := 2; fileExists(broken); i++ {
		broken = fmt.Sprintf("%s.broken-%d-%d", path, now.Unix(), i)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("pad: read broken file: %w", err)
	}
	if err := os.Rename(path, broken); err != nil {
		return "", nil, fmt.Errorf("pad: quarantine: %w", err)
	}
	return broken, raw, nil
}

func (s *fileStore) history(limit int) ([]histItem, error) {
	vs, err := listHistory(s.path, s.ext)
	if err != nil {
		return nil, err
	}
	return fileHistItems(vs, limit), nil
}

func (s *fileStore) addNotice(_ heldLock, note string) error {
	f, err := os.OpenFile(filepath.Join(s.path, noticeFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("pad: write notice: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.ReplaceAll(note, "\n", " ") + "\n"); err != nil {
		return fmt.Errorf("pad: write notice: %w", err)
	}
	return nil
}

func (s *fileStore) notices(consume bool) ([]string, error) {
	path := filepath.Join(s.path, noticeFile)
	if !fileExists(path) {
		return nil, nil
	}
	if !consume {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil
		}
		return splitNonEmpty(string(data)), nil
	}
	lk, err := lockFile(filepath.Join(s.path, lockName))
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pad: read notice: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("pad: remove notice: %w", err)
	}
	return splitNonEmpty(string(data)), nil
}

func (s *fileStore) appendEntry(e Entry) error { return appendEntry(s.path, e) }

func (s *fileStore) readLedger() ([]Entry, int, error) { return readLedger(s.path) }

func (s *fileStore) compactLedger(cutoff time.Time) (int, error) {
	return compactLedger(s.path, cutoff)
}

// stamp summarizes the pad and ledger files by mtime and size; any write,
// a hand edit included, changes it.
func (s *fileStore) stamp() (string, error) {
	var b strings.Builder
	for _, path := range []string{s.docPath(), filepath.Join(s.path, ledgerFile)} {
		if info, err := os.Stat(path); err == nil {
			fmt.Fprintf(&b, "%d/%d;", info.ModTime().UnixNano(), info.Size())
		} else {
			b.WriteString("-;")
		}
	}
	b.WriteString(s.keysRev()) // keyed values: their change counter
	return b.String(), nil
}

// cleanStale removes crash leftovers while holding both locks, so no live
// writer (of the pad or of a ledger compaction) owns a temp file. A
// directory that does not exist yet is left alone (and not created).
func (s *fileStore) cleanStale() error {
	if info, err := os.Stat(s.path); err != nil || !info.IsDir() {
		return nil
	}
	lk, err := lockFile(filepath.Join(s.path, lockName))
	if err != nil {
		return err
	}
	defer lk.unlock()
	lk2, err := lockFile(filepath.Join(s.path, ledgerLockFile))
	if err != nil {
		return err
	}
	defer lk2.unlock()
	_, err = removeTemps(s.path)
	return err
}
