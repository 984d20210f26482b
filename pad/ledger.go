package pad

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

const (
	ledgerFile     = layout.PadLedgerFile
	ledgerLockFile = layout.PadLedgerLockFile
)

// Entry is one finding in the append-only ledger, stored as one JSON line.
type Entry struct {
	Time time.Time `json:"ts"`
	// By is the agent that appended the entry, as the server knows it
	// (never a tool argument); empty when unknown.
	By   string   `json:"by,omitempty"`
	Note string   `json:"note"`
	Tags []string `json:"tags,omitempty"`
	// Mark, when set, makes the entry a marker rather than a finding:
	// markClear hides every entry before it, markUnclear cancels the last
	// clear still in effect (a restore to a version older than it). See
	// [Pad.Clear].
	Mark string `json:"mark,omitempty"`
}

// Ledger markers ([Entry.Mark]).
const (
	markClear   = "clear"
	markUnclear = "unclear"
)

// valid reports whether a decoded ledger item is an entry: a finding has
// a note, a marker a known mark.
func (e Entry) valid() bool {
	switch e.Mark {
	case "":
		return e.Note != ""
	case markClear, markUnclear:
		return true
	}
	return false
}

// resolveMarks returns the findings a clear has not hidden, oldest first,
// and the clears in effect, oldest first.
func resolveMarks(entries []Entry) (visible, clears []Entry) {
	var hidden [][]Entry // what each clear in effect hid
	for _, e := range entries {
		switch e.Mark {
		case markClear:
			hidden = append(hidden, visible)
			clears = append(clears, e)
			visible = nil
		case markUnclear:
			if n := len(hidden); n > 0 {
				visible = append(append([]Entry(nil), hidden[n-1]...), visible...)
				hidden, clears = hidden[:n-1], clears[:n-1]
			}
		default:
			visible = append(visible, e)
		}
	}
	return visible, clears
}

// appendEntry writes one entry as a single O_APPEND write under the ledger
// lock. The lock makes appends from goroutines and processes take turns;
// the single write keeps a line whole even where the lock is not honoured.
func appendEntry(d memdir.Dir, e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("pad: encode entry: %w", err)
	}
	line = append(line, '\n')
	// Opening the lock creates the pad directory (0700) if missing.
	lk, err := lockFile(d, ledgerLockFile)
	if err != nil {
		return err
	}
	defer lk.unlock()
	// Open under the lock: a compaction may have renamed a new file into
	// place, and a descriptor opened before it would write to the old one.
	// Read-write, not write-only: the torn-line check below reads a byte.
	f, err := d.OpenFile(ledgerFile, os.O_RDWR|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return fmt.Errorf("pad: open ledger: %w", err)
	}
	defer f.Close()
	// A crash mid-write can leave a line without its newline; start ours on
	// a fresh line so only the torn one is lost.
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("pad: append entry: %w", err)
	}
	return nil
}

// readLedger returns all entries in file order and the number of lines that
// did not decode (torn or hand-mangled), which are skipped.
func readLedger(d memdir.Dir) ([]Entry, int, error) {
	data, err := d.ReadFile(ledgerFile)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, 0, nil
		}
		return nil, 0, fmt.Errorf("pad: read ledger: %w", err)
	}
	return decodeLedger(data)
}

func decodeLedger(data []byte) ([]Entry, int, error) {
	var out []Entry
	bad := 0
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var line []byte
		if i < 0 {
			line, data = data, nil
		} else {
			line, data = data[:i], data[i+1:]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil || !e.valid() {
			bad++
			continue
		}
		out = append(out, e)
	}
	return out, bad, nil
}

// compactLedger rewrites the ledger without entries older than cutoff and
// returns how many were dropped. Unreadable lines are dropped too.
func compactLedger(d memdir.Dir, cutoff time.Time) (int, error) {
	if _, err := d.Stat(ledgerFile); err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, fmt.Errorf("pad: stat ledger: %w", err)
	}
	lk, err := lockFile(d, ledgerLockFile)
	if err != nil {
		return 0, err
	}
	defer lk.unlock()
	data, err := d.ReadFile(ledgerFile)
	if err != nil {
		return 0, fmt.Errorf("pad: read ledger: %w", err)
	}
	entries, bad, _ := decodeLedger(data)
	var buf bytes.Buffer
	dropped := bad
	for _, e := range entries {
		if e.Time.Before(cutoff) {
			dropped++
			continue
		}
		line, _ := json.Marshal(e)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if dropped == 0 {
		return 0, nil
	}
	if err := writeAtomic(d, ledgerFile, buf.Bytes()); err != nil {
		return 0, err
	}
	return dropped, nil
}

// cleanNote validates a note and its tags for the ledger.
func cleanNote(note string, tags []string) (string, []string, error) {
	note = strings.TrimSpace(note)
	if note == "" {
		return "", nil, fmt.Errorf("%w: append_scratchpad needs a non-empty note", ErrEmptyNote)
	}
	if n := utf8.RuneCountInString(note); n > maxNoteChars {
		return "", nil, fmt.Errorf("%w: %d characters, the limit is %d; split it or keep the detail in a file", ErrNoteTooLong, n, maxNoteChars)
	}
	var clean []string
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || seen[t] {
			continue
		}
		if utf8.RuneCountInString(t) > maxTagChars {
			return "", nil, fmt.Errorf("%w: a tag is at most %d characters", ErrBadTags, maxTagChars)
		}
		if len(clean) == maxKeyTags {
			return "", nil, fmt.Errorf("%w: at most %d tags a finding", ErrBadTags, maxKeyTags)
		}
		seen[t] = true
		clean = append(clean, t)
	}
	return strings.ToValidUTF8(note, "\uFFFD"), clean, nil
}
