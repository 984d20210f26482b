package pad

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestBackendSnapshotRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now})
		if _, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "ship v2"}, {Section: "Plan", Op: OpAppend, Content: "try the risky branch"}}); err != nil {
			t.Fatal(err)
		}
		mustApply(t, p.Pad,
			KeyOp{Op: OpSet, Key: "branch", Value: json.RawMessage(`"main"`)},
			KeyOp{Op: OpSet, Key: "short", Value: json.RawMessage(`1`), TTL: ttl(30)},
			KeyOp{Op: OpSet, Key: "gone", Value: json.RawMessage(`1`), TTL: ttl(1)},
		)
		if _, err := p.Append("before the branch", nil); err != nil {
			t.Fatal(err)
		}
		clock.Add(2 * time.Second) // "gone" expires before the snapshot
		res, err := p.UpdateKeys("w1", []KeyOp{{Op: OpSnapshot, Content: "before-branch"}})
		if err != nil || res.Changed || len(res.Info) != 1 || !strings.Contains(res.Info[0], "2 key(s), the ledger's 1 visible entries") {
			t.Fatalf("snapshot: %+v %v", res, err)
		}
		docBefore := p.doc()
		histBefore := len(mustHistory(t, p.Pad))

		// The risky branch.
		if _, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "something else"}, {Section: "Plan", Op: OpCheck, Content: "1"}}); err != nil {
			t.Fatal(err)
		}
		mustApply(t, p.Pad,
			KeyOp{Op: OpSet, Key: "branch", Value: json.RawMessage(`"risky"`)},
			KeyOp{Op: OpSet, Key: "extra", Value: json.RawMessage(`[1,2]`)},
			KeyOp{Op: OpDelete, Key: "short"},
		)
		if _, err := p.Append("the branch failed", nil); err != nil {
			t.Fatal(err)
		}

		// Restore from another handle, as another worker would.
		q := p.another(Options{Now: clock.Now})
		res, err = q.UpdateKeys("w2", []KeyOp{{Op: OpRestore, Content: "before-branch"}})
		if err != nil || !res.Changed {
			t.Fatalf("restore: %+v %v", res, err)
		}
		if !strings.Contains(res.Diff, "-something else") || !strings.Contains(res.Diff, `+branch = "main"`) || !strings.Contains(res.Diff, "-extra = [1,2]") {
			t.Fatalf("restore diff:\n%s", res.Diff)
		}
		if p.doc() != docBefore {
			t.Fatalf("document after restore:\n%s\nwant\n%s", p.doc(), docBefore)
		}
		if got := keyNames(t, p.Pad, KeyFilter{}, false); got != "branch short" {
			t.Fatalf("keys after restore: %q", got)
		}
		// Recorded in history (a new version on top) and in the ledger.
		hist := mustHistory(t, p.Pad)
		if len(hist) <= histBefore+1 {
			t.Fatalf("history has %d versions, had %d before the branch", len(hist), histBefore)
		}
		entries, _ := ledgerOf(t, p.Pad)
		last := entries[len(entries)-1]
		if len(entries) != 3 || last.By != "w2" || !strings.Contains(last.Note, `restored snapshot "before-branch"`) || !strings.Contains(last.Note, "appended since it: 1, kept") || last.Tags[0] != "snapshot" {
			t.Fatalf("ledger: %+v", entries)
		}
		// Restoring again changes nothing in the document but is still
		// recorded.
		n := len(mustHistory(t, p.Pad))
		if _, err := p.RestoreSnapshot("w1", "before-branch"); err != nil {
			t.Fatal(err)
		}
		if got := len(mustHistory(t, p.Pad)); got != n+1 {
			t.Fatalf("history %d versions after a second restore, want %d", got, n+1)
		}
		// The TTL is by the clock: once past, a restored key stays expired.
		clock.Add(time.Minute)
		if _, err := p.RestoreSnapshot("w1", "before-branch"); err != nil {
			t.Fatal(err)
		}
		if got := keyNames(t, p.Pad, KeyFilter{}, false); got != "branch" {
			t.Fatalf("keys after a late restore: %q", got)
		}

		// Errors.
		if _, err := p.RestoreSnapshot("w1", "nope"); !errors.Is(err, ErrNoSnapshot) {
			t.Fatalf("missing snapshot: %v", err)
		}
		for _, ops := range [][]KeyOp{
			{{Op: OpSnapshot, Content: "1abc"}},
			{{Op: OpSnapshot, Content: "a"}, {Op: OpSet, Key: "x", Value: json.RawMessage(`1`)}},
		} {
			if _, err := p.UpdateKeys("w1", ops); !errors.Is(err, ErrBadPatch) {
				t.Fatalf("%+v: %v", ops, err)
			}
		}
		names, err := p.Snapshots()
		if err != nil || len(names) != 1 || names[0] != "before-branch" {
			t.Fatalf("snapshots %v %v", names, err)
		}

		// The CLI.
		var out, errOut bytes.Buffer
		if code := SnapshotCommand(p.Pad, "snapshot", "cli-one", &out, &errOut); code != 0 || !strings.Contains(out.String(), `snapshot "cli-one" taken`) {
			t.Fatalf("cli snapshot: %d %s %s", code, out.String(), errOut.String())
		}
		out.Reset()
		if code := SnapshotCommand(p.Pad, "snapshots", "", &out, &errOut); code != 0 || out.String() != "before-branch\ncli-one\n" {
			t.Fatalf("cli snapshots: %d %q", code, out.String())
		}
		out.Reset()
		if code := SnapshotCommand(p.Pad, "restore", "cli-one", &out, &errOut); code != 0 || !strings.Contains(out.String(), `restored snapshot "cli-one"`) {
			t.Fatalf("cli restore: %d %s %s", code, out.String(), errOut.String())
		}
		if code := SnapshotCommand(p.Pad, "restore", "nope", &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no such snapshot") {
			t.Fatalf("cli restore nope: %d %s", code, errOut.String())
		}
	})
}

func TestSnapshotOfStructuredPad(t *testing.T) {
	p := newPad(t, Options{Format: FormatJSON})
	if _, err := p.Merge([]byte(`{"goal":"ship v2","n":1}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Snapshot("a", "s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Merge([]byte(`{"goal":null,"n":2}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.RestoreSnapshot("a", "s1"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p.Path()); !strings.Contains(got, `"goal": "ship v2"`) || !strings.Contains(got, `"n": 1`) {
		t.Fatalf("restored state:\n%s", got)
	}
	q := newPad(t, Options{})
	if err := copyDirSnapshot(p, q); err != nil {
		t.Fatal(err)
	}
	if _, err := q.RestoreSnapshot("a", "s1"); !errors.Is(err, ErrWrongFormat) {
		t.Fatalf("restoring a structured snapshot into a Markdown pad: %v", err)
	}
}

// copyDirSnapshot copies snapshot s1 from one directory pad to another.
func copyDirSnapshot(from, to *Pad) error {
	data, _, err := from.keyStore().readSnapshot("s1")
	if err != nil {
		return err
	}
	lk, err := to.store.lock()
	if err != nil {
		return err
	}
	defer lk.unlock()
	return to.keyStore().writeSnapshot(lk, "s1", data)
}

// A crash while writing a snapshot leaves a temp file that Open removes.
func TestOpenRemovesSnapshotTemps(t *testing.T) {
	p := newPad(t, Options{})
	if _, err := p.Snapshot("a", "s1"); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(p.Dir(), snapshotDir, ".tmp-"+"s2.json-123")
	if err := os.WriteFile(tmp, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p.Dir(), Options{}); err != nil {
		t.Fatal(err)
	}
	if fileExists(tmp) {
		t.Fatal("the snapshot temp file is still there")
	}
	if names, _ := p.Snapshots(); len(names) != 1 {
		t.Fatalf("snapshots %v", names)
	}
}

// The snapshot message counts the entries a reading shows: expired ones
// are not among them.
func TestSnapshotCountsVisibleEntries(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	p := newPad(t, Options{EntryTTL: time.Hour, Now: func() time.Time { return now }})
	for _, n := range []string{"old one", "old two"} {
		if _, err := p.Append(n, nil); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Hour)
	if _, err := p.Append("fresh", nil); err != nil {
		t.Fatal(err)
	}
	res, err := p.UpdateKeys("w1", []KeyOp{{Op: OpSnapshot, Content: "s"}})
	if err != nil || len(res.Info) != 1 || !strings.Contains(res.Info[0], "the ledger's 1 visible entries") {
		t.Fatalf("snapshot: %+v %v", res, err)
	}
}
