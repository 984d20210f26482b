package pad

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// fileStore keeps a pad in a directory: pad.md or pad.json, the ledger
// entries.jsonl, .history/, .notice, and flock(2) locks on sidecar files.
// Every file is reached through d, so nothing of it is read or written
// outside memory_dir (see package memdir).
type fileStore struct {
	d    memdir.Dir // the pad directory
	file string     // mdFile or jsonFile
	ext  string     // extension of history files
}

func (s *fileStore) location() string { return s.d.Path() }
func (s *fileStore) dir() string      { return s.d.Path() }
func (s *fileStore) docPath() string  { return s.d.Join(s.file) }

// lock takes the pad lock; opening .pad.lock creates the pad directory
// (0700) on the first write.
func (s *fileStore) lock() (heldLock, error) {
	return lockFile(s.d, lockName)
}

func (s *fileStore) readDoc() ([]byte, bool, error) {
	raw, err := s.d.ReadFile(s.file)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("pad: read %s: %w", s.file, err)
	}
	return raw, true, nil
}

// commit keeps the order a crash can survive: the hand edit goes to
// history before the new file replaces it. .history is made (or refused,
// when a link leads it out of memory_dir) before anything is written, so
// a refused commit changes nothing.
func (s *fileStore) commit(_ heldLock, prev, next []byte, pushNext bool, keep int, now time.Time) error {
	if err := s.d.Sub(historyDir).Make(); err != nil {
		return fmt.Errorf("pad: history: %w", err)
	}
	if prev != nil {
		if err := addHistory(s.d, s.ext, prev, keep, now); err != nil {
			return err
		}
	}
	if err := writeAtomic(s.d, s.file, next); err != nil {
		return err
	}
	if pushNext {
		return addHistory(s.d, s.ext, next, keep, now)
	}
	return nil
}

// brokenName is a name beside name, for a quarantined copy, that is not
// taken yet.
func (s *fileStore) brokenName(name string, now time.Time) string {
	broken := fmt.Sprintf("%s.broken-%d", name, now.Unix())
	for i := 2; s.exists(broken); i++ {
		broken = fmt.Sprintf("%s.broken-%d-%d", name, now.Unix(), i)
	}
	return broken
}

// exists reports whether name is in the pad directory (a link counts).
func (s *fileStore) exists(name string) bool {
	_, err := s.d.Lstat(name)
	return err == nil
}

func (s *fileStore) quarantine(_ heldLock, now time.Time) (string, []byte, error) {
	broken := s.brokenName(s.file, now)
	raw, err := s.d.ReadFile(s.file)
	if err != nil {
		return "", nil, fmt.Errorf("pad: read broken file: %w", err)
	}
	if err := s.d.Rename(s.file, broken); err != nil {
		return "", nil, fmt.Errorf("pad: quarantine: %w", err)
	}
	return s.d.Join(broken), raw, nil
}

func (s *fileStore) history(limit int) ([]histItem, error) {
	vs, err := listHistory(s.d, s.ext)
	if err != nil {
		return nil, err
	}
	return fileHistItems(s.d, vs, limit), nil
}

func (s *fileStore) addNotice(_ heldLock, note string) error {
	f, err := s.d.OpenFile(noticeFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
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
	if !s.exists(noticeFile) {
		return nil, nil
	}
	if !consume {
		data, err := s.d.ReadFile(noticeFile)
		if err != nil {
			return nil, nil
		}
		return splitNonEmpty(string(data)), nil
	}
	lk, err := lockFile(s.d, lockName)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	data, err := s.d.ReadFile(noticeFile)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("pad: read notice: %w", err)
	}
	if err := s.d.Remove(noticeFile); err != nil {
		return nil, fmt.Errorf("pad: remove notice: %w", err)
	}
	return splitNonEmpty(string(data)), nil
}

func (s *fileStore) appendEntry(e Entry) error { return appendEntry(s.d, e) }

func (s *fileStore) readLedger() ([]Entry, int, error) { return readLedger(s.d) }

func (s *fileStore) compactLedger(cutoff time.Time) (int, error) {
	return compactLedger(s.d, cutoff)
}

// stamp summarizes the pad and ledger files by mtime and size; any write,
// a hand edit included, changes it.
func (s *fileStore) stamp() (string, error) {
	var b strings.Builder
	for _, name := range []string{s.file, ledgerFile} {
		if info, err := s.d.Stat(name); err == nil {
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
// directory that does not exist yet is left alone (and not created); one
// reached through a link leading out of memory_dir is refused.
func (s *fileStore) cleanStale() error {
	info, err := s.d.Stat("")
	if errors.Is(err, memdir.ErrOutside) {
		return fmt.Errorf("pad: %w", err)
	}
	if err != nil || !info.IsDir() {
		return nil
	}
	lk, err := lockFile(s.d, lockName)
	if err != nil {
		return err
	}
	defer lk.unlock()
	lk2, err := lockFile(s.d, ledgerLockFile)
	if err != nil {
		return err
	}
	defer lk2.unlock()
	if _, err = removeTemps(s.d); err != nil {
		return err
	}
	return s.memCleanTemps()
}
