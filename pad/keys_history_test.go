package pad

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBackendKeysHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now, History: 4, Format: FormatJSON})
		step := func(ops ...KeyOp) {
			t.Helper()
			clock.Add(time.Second)
			mustApply(t, p.Pad, ops...)
		}
		step(KeyOp{Op: OpSet, Key: "a", Value: json.RawMessage(`1`)})
		step(KeyOp{Op: OpSet, Key: "b", Value: json.RawMessage(`2`), TTL: ttl(600), Sliding: true})
		step(KeyOp{Op: OpDelete, Key: "a"})
		// A renewal is not a version; a no-op writes nothing.
		if _, err := p.Read(nil); err != nil {
			t.Fatal(err)
		}
		step(KeyOp{Op: OpSet, Key: "b", Value: json.RawMessage(`2`), TTL: ttl(600), Sliding: true})
		vs, err := p.KeysHistory()
		if err != nil || len(vs) != 3 {
			t.Fatalf("history: %+v %v", vs, err)
		}
		// The document's history (a structured pad: .json versions) does
		// not see the keys' versions, nor they its.
		if hist := mustHistory(t, p.Pad); len(hist) != 0 {
			t.Fatalf("document history: %+v", hist)
		}
		d, err := p.KeysDiff(1)
		if err != nil || !strings.Contains(d, "-a = 1") || strings.Contains(d, "+b") {
			t.Fatalf("diff 1: %q %v", d, err)
		}
		if d, _ := p.KeysDiff(3); !strings.Contains(d, "/dev/null") || !strings.Contains(d, "+a = 1") {
			t.Fatalf("diff 3: %q", d)
		}
		res, err := p.RestoreKeys(2) // a and b
		if err != nil || !strings.Contains(res.Diff, "+a = 1") {
			t.Fatalf("restore: %+v %v", res, err)
		}
		if got := keyNames(t, p.Pad, KeyFilter{}, false); got != "a b" {
			t.Fatalf("after restore: %q", got)
		}
		// Pruned to History versions; the restore is one.
		step(KeyOp{Op: OpSet, Key: "c", Value: json.RawMessage(`3`)})
		if vs, _ := p.KeysHistory(); len(vs) != 4 {
			t.Fatalf("%d versions, want 4", len(vs))
		}
		if _, err := p.RestoreKeys(9); !errors.Is(err, ErrNoVersion) {
			t.Fatalf("restore 9: %v", err)
		}
		var out, errOut bytes.Buffer
		if code := KeysCommand(p.Pad, "history", 0, &out, &errOut); code != 0 || strings.Count(out.String(), "\n") != 5 {
			t.Fatalf("history --keys: %d %q %s", code, out.String(), errOut.String())
		}
		out.Reset()
		if code := KeysCommand(p.Pad, "diff", 1, &out, &errOut); code != 0 || !strings.Contains(out.String(), "+c = 3") {
			t.Fatalf("diff --keys: %d %q", code, out.String())
		}
		if code := KeysCommand(p.Pad, "show", 1, &out, &errOut); code != 2 {
			t.Fatalf("show --keys: %d", code)
		}
	})
}
