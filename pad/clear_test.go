package pad

import (
	"context"
	"strings"
	"testing"
)

// Clear empties sections and ledger and keeps the pad; it is a version in
// history, and restoring the version before it brings everything back,
// ledger included. Same on every backend.
func TestBackendClearAndRestore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "find the leak"})
		for _, n := range []string{"n1", "n2"} {
			if _, err := p.AppendBy("alice", n, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := len(mustHistory(t, p.Pad))
		res, err := p.Clear("alice")
		if err != nil || !res.Changed || !strings.Contains(res.Diff, "-find the leak") {
			t.Fatalf("Clear = %+v, %v", res, err)
		}
		if got := len(mustHistory(t, p.Pad)); got != before+1 {
			t.Fatalf("history %d versions after clear, want %d", got, before+1)
		}
		if _, err := p.AppendBy("bob", "n3", nil); err != nil {
			t.Fatal(err)
		}
		text, err := p.another(Options{}).Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "find the leak") || strings.Contains(text, "n1") || strings.Contains(text, "n2") || !strings.Contains(text, "n3") {
			t.Fatalf("after clear another handle reads:\n%s", text)
		}
		if r, err := p.Validate(); err != nil || r.Entries != 1 || r.BadLines != 0 {
			t.Fatalf("Validate after clear: %+v, %v", r, err)
		}
		// Clearing an empty pad is still a version.
		if _, err := p.Clear(""); err != nil {
			t.Fatal(err)
		}
		if got := len(mustHistory(t, p.Pad)); got != before+2 {
			t.Fatalf("history %d versions after a second clear, want %d", got, before+2)
		}
		// Version 3 is the pad before the first clear.
		res, err = p.Restore(3)
		if err != nil || !res.Changed {
			t.Fatalf("Restore(3) = %+v, %v", res, err)
		}
		text, err = p.Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"find the leak", "(alice) n1", "(alice) n2", "(bob) n3"} {
			if !strings.Contains(text, w) {
				t.Errorf("after restore %q is missing:\n%s", w, text)
			}
		}
		if strings.Index(text, "n1") > strings.Index(text, "n3") {
			t.Errorf("ledger out of order after restore:\n%s", text)
		}
	})
}

func TestToolClear(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx := WithAuthor(context.Background(), "alice")
	h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "t"}}})
	h.tool(ctx, ToolAppend, map[string]any{"note": "a finding"})
	if out, _ := h.tool(ctx, ToolUpdate, map[string]any{"clear": true, "patches": []map[string]any{{"section": "Task", "op": "clear"}}}); !strings.Contains(out, `"error"`) {
		t.Errorf("clear with patches: %s", out)
	}
	if out, isErr := h.tool(ctx, ToolUpdate, map[string]any{"clear": true}); isErr || strings.Contains(out, `"error"`) {
		t.Fatalf("clear: %s", out)
	}
	if out, _ := h.tool(ctx, ToolRead, map[string]any{}); strings.Contains(out, "a finding") {
		t.Errorf("read after clear:\n%s", out)
	}
}

func TestBackendClearStructured(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{Format: FormatJSON})
		if _, err := p.Merge([]byte(`{"task":"t"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Clear(""); err != nil {
			t.Fatal(err)
		}
		if d := strings.TrimSpace(p.doc()); d != "{}" {
			t.Fatalf("after clear: %q", d)
		}
		if _, err := p.Restore(2); err != nil || !strings.Contains(p.doc(), `"task"`) {
			t.Fatalf("restore: %v\n%s", err, p.doc())
		}
	})
}

// TestBackendClearEmptiesKeys: clear empties the keyed values too, and
// the keys' history brings them back.
func TestBackendClearEmptiesKeys(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		if _, err := p.UpdateKeys("alice", []KeyOp{{Op: "set", Key: "current_pod", Value: []byte(`"checkout-7f9"`)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Clear("alice"); err != nil {
			t.Fatal(err)
		}
		if keys, err := p.another(Options{}).Keys(KeyFilter{}, false); err != nil || len(keys) != 0 {
			t.Fatalf("keys after clear: %v, %v", keys, err)
		}
	})
}
