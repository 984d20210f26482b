package pad

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"
)

// ErrNoSnapshot reports a restore of a snapshot name that was never taken.
var ErrNoSnapshot = errors.New("no such snapshot")

// maxSnapshots bounds the named snapshots of one pad; taking one under an
// existing name replaces it and is always allowed.
const maxSnapshots = 32

var snapshotName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._-]{0,63}$`)

// checkSnapshotName returns why name cannot name a snapshot, or "".
// Names start with a letter so `pad restore N` (a history version) and
// `pad restore NAME` (a snapshot) never collide.
func checkSnapshotName(name string) string {
	if !snapshotName.MatchString(name) {
		return fmt.Sprintf("snapshot names are a letter then up to 63 of A-Z a-z 0-9 . _ - (content); got %s", quoteArg(name))
	}
	return ""
}

// snapshotData is a stored snapshot: the whole pad but the ledger, whose
// position is recorded (the ledger is append-only: a restore keeps what
// was appended since and says how much that is).
type snapshotData struct {
	Name   string    `json:"name"`
	Taken  time.Time `json:"taken"`
	By     string    `json:"by,omitempty"`
	Format string    `json:"format"`
	Doc    string    `json:"doc"`
	Keys   *keySet   `json:"keys"`
	Ledger int       `json:"ledger"`
}

// Snapshot saves the whole pad (document, live keys, ledger position)
// under name, replacing an earlier snapshot of that name. Nothing else
// changes.
func (p *Pad) Snapshot(by, name string) (*Result, error) {
	if msg := checkSnapshotName(name); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrBadPatch, msg)
	}
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	res := &Result{}
	st, note, err := p.loadLocked(lk)
	if err != nil {
		return nil, err
	}
	if note != "" {
		res.Warnings = append(res.Warnings, note)
	}
	ks, warn, err := p.loadKeys()
	if err != nil {
		return nil, err
	}
	if warn != "" {
		res.Warnings = append(res.Warnings, warn)
	}
	now := p.opts.Now()
	ks.sweep(now)
	entries, _, err := p.store.readLedger()
	if err != nil {
		return nil, err
	}
	existing, err := p.keyStore().listSnapshots()
	if err != nil {
		return nil, err
	}
	if len(existing) >= maxSnapshots && !containsString(existing, name) {
		return nil, fmt.Errorf("%w: the pad has %d snapshots, the most it keeps; reuse a name to replace one", ErrBadPatch, len(existing))
	}
	snap := snapshotData{Name: name, Taken: now.UTC(), By: by, Format: p.opts.Format, Doc: string(st.canon), Keys: ks, Ledger: len(entries)}
	data, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	if err := p.keyStore().writeSnapshot(lk, name, data); err != nil {
		return nil, err
	}
	// The position kept is the ledger's raw length; what the message
	// counts is what a reading shows (cleared and expired entries hidden).
	res.Info = append(res.Info, fmt.Sprintf("snapshot %q taken: the document, %d key(s), the ledger's %d visible entries; restore it with {\"op\":\"restore\",\"content\":%q}", name, len(ks.Keys), p.visibleCount(entries, now), name))
	return res, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Snapshots lists the snapshot names, sorted.
func (p *Pad) Snapshots() ([]string, error) { return p.keyStore().listSnapshots() }

// RestoreSnapshot makes the snapshot name the current pad: its document
// and its keys (a key whose expiry time has passed since stays expired:
// expiry is by the clock). The restore is recorded in history (a new
// version is saved even when the document did not change) and as a ledger
// entry tagged "snapshot" naming the snapshot; ledger entries appended
// after the snapshot are kept.
func (p *Pad) RestoreSnapshot(by, name string) (*Result, error) {
	if msg := checkSnapshotName(name); msg != "" {
		return nil, fmt.Errorf("%w: %s", ErrBadPatch, msg)
	}
	lk, err := p.store.lock()
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	raw, ok, err := p.keyStore().readSnapshot(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		names, _ := p.keyStore().listSnapshots()
		return nil, fmt.Errorf("%w %q (snapshots: %v)", ErrNoSnapshot, name, names)
	}
	var snap snapshotData
	if err := json.Unmarshal(raw, &snap); err != nil {
		return nil, fmt.Errorf("pad: snapshot %q does not decode: %w", name, err)
	}
	if snap.Format != p.opts.Format {
		return nil, fmt.Errorf("%w: snapshot %q is of a %s pad, this pad is %s", ErrWrongFormat, name, snap.Format, p.opts.Format)
	}
	doc := []byte(snap.Doc)
	if _, err := p.parse(doc); err != nil {
		return nil, fmt.Errorf("pad: snapshot %q: %w", name, err)
	}
	res, err := p.mutateLocked(lk, false, func(*state) ([]byte, []string, error) { return doc, nil, nil })
	if err != nil {
		return nil, err
	}
	now := p.opts.Now()
	if !res.Changed {
		// Record the restore in history all the same.
		if err := p.store.commit(lk, nil, doc, true, p.opts.History, now); err != nil {
			return nil, err
		}
	}
	kres, err := p.mutateKeysLocked(lk, func(ks *keySet, now time.Time) ([]string, error) {
		ks.Keys = map[string]*keyRecord{}
		if snap.Keys != nil {
			for k, r := range snap.Keys.clone().Keys {
				if !r.expired(now) {
					ks.Keys[k] = r
				}
			}
		}
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	res.Changed = res.Changed || kres.Changed
	res.Diff += kres.Diff
	res.Warnings = append(res.Warnings, kres.Warnings...)
	entries, _, err := p.store.readLedger()
	if err != nil {
		return nil, err
	}
	since := max(len(entries)-snap.Ledger, 0)
	note := fmt.Sprintf("restored snapshot %q (taken %s); ledger entries appended since it: %d, kept", name, entryTime(snap.Taken), since)
	if _, err := p.AppendBy(by, note, []string{"snapshot"}); err != nil {
		return nil, err
	}
	res.Changed = true
	res.Info = append(res.Info, note+".")
	return res, nil
}

// SnapshotCommand runs `scratchpad-mcp pad snapshot NAME`, `pad restore
// NAME` (a snapshot; a number restores a history version, see [Command])
// and `pad snapshots`, with the process exit code.
func SnapshotCommand(p *Pad, sub, name string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "scratchpad-mcp pad %s: %v\n", sub, err)
		return 1
	}
	var res *Result
	var err error
	switch sub {
	case "snapshot":
		res, err = p.Snapshot("cli", name)
	case "restore":
		res, err = p.RestoreSnapshot("cli", name)
	case "snapshots":
		names, err := p.Snapshots()
		if err != nil {
			return fail(err)
		}
		if len(names) == 0 {
			fmt.Fprintln(stdout, "no snapshots")
		}
		for _, n := range names {
			fmt.Fprintln(stdout, n)
		}
		return 0
	default:
		fmt.Fprintf(stderr, "scratchpad-mcp pad: unknown subcommand %q\n", sub)
		return 2
	}
	if err != nil {
		return fail(err)
	}
	writeResult(stdout, res)
	return 0
}

// visibleCount is how many of the ledger's entries a reading at now
// shows: not cleared, not older than EntryTTL.
func (p *Pad) visibleCount(entries []Entry, now time.Time) int {
	visible, _ := resolveMarks(entries)
	if p.opts.EntryTTL <= 0 {
		return len(visible)
	}
	cutoff, n := now.Add(-p.opts.EntryTTL), 0
	for _, e := range visible {
		if !e.Time.Before(cutoff) {
			n++
		}
	}
	return n
}
