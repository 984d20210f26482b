package pad

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testClock is an injected wall clock that tests move by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func ttl(s float64) *float64 { return &s }

func mustApply(t *testing.T, p *Pad, ops ...KeyOp) *Result {
	t.Helper()
	res, err := p.UpdateKeys("tester", ops)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func keyNames(t *testing.T, p *Pad, f KeyFilter, renew bool) string {
	t.Helper()
	keys, err := p.Keys(f, renew)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, k.Name)
	}
	return strings.Join(names, " ")
}

func TestBackendKeysSetGetDelete(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now})
		res := mustApply(t, p.Pad,
			KeyOp{Op: OpSet, Key: "current_pod", Value: json.RawMessage(`"checkout-7f9"`)},
			KeyOp{Op: OpSet, Key: "candidate_causes", Value: json.RawMessage(`[ "oom", {"k": 1} ]`), Tags: []string{"triage"}},
		)
		if !res.Changed || !strings.Contains(res.Diff, `+current_pod = "checkout-7f9"`) || !strings.Contains(res.Diff, `+candidate_causes = ["oom",{"k":1}]  (tags triage)`) {
			t.Fatalf("result %+v", res)
		}
		v, ok, err := p.Get("candidate_causes")
		if err != nil || !ok || string(v) != `["oom",{"k":1}]` {
			t.Fatalf("get = %s %v %v", v, ok, err)
		}
		// Another handle (process, host) sees the keys.
		q := p.another(Options{Now: clock.Now})
		if got := keyNames(t, q, KeyFilter{}, false); got != "candidate_causes current_pod" {
			t.Fatalf("keys from another handle: %q", got)
		}
		// Setting the same value again changes nothing.
		if res := mustApply(t, p.Pad, KeyOp{Op: OpSet, Key: "current_pod", Value: json.RawMessage(`"checkout-7f9"`)}); res.Changed {
			t.Fatalf("same value: %+v", res)
		}
		res = mustApply(t, p.Pad, KeyOp{Op: OpDelete, Key: "current_pod"}, KeyOp{Op: OpDelete, Key: "nope"})
		if !res.Changed || !strings.Contains(res.Diff, `-current_pod`) || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `no key "nope"`) {
			t.Fatalf("delete: %+v", res)
		}
		if _, ok, _ := p.Get("current_pod"); ok {
			t.Fatal("deleted key still there")
		}
		// A bad op anywhere changes nothing: all or nothing, with the
		// section patches too.
		before := p.doc()
		for _, ops := range [][]KeyOp{
			{{Op: OpSet, Key: "a", Value: json.RawMessage(`1`)}, {Op: OpSet, Key: "bad name", Value: json.RawMessage(`1`)}},
			{{Op: OpSet, Key: "a", Value: json.RawMessage(`{nope`)}},
			{{Op: OpSet, Key: "a"}},
			{{Op: OpSet, Key: "a:", Value: json.RawMessage(`1`)}},
			{{Op: OpSet, Key: "a", Value: json.RawMessage(`1`), TTL: ttl(-1)}},
			{{Op: OpSet, Key: "a", Value: json.RawMessage(`"` + strings.Repeat("x", maxValueBytes) + `"`)}},
		} {
			_, err := p.Apply("t", []Patch{{Section: "Task", Op: OpReplace, Content: "x"}}, ops)
			var pe *PatchError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBadPatch) {
				t.Fatalf("%+v: err = %v", ops, err)
			}
		}
		if got := keyNames(t, p.Pad, KeyFilter{}, false); got != "candidate_causes" || p.doc() != before {
			t.Fatalf("a refused batch changed something: keys %q", got)
		}
		// A mixed batch applies both.
		res, err = p.Apply("t", []Patch{{Section: "Task", Op: OpReplace, Content: "find the leak"}}, []KeyOp{{Op: OpSet, Key: "a", Value: json.RawMessage(`1`)}})
		if err != nil || !strings.Contains(res.Diff, "+find the leak") || !strings.Contains(res.Diff, "+a = 1") {
			t.Fatalf("mixed: %+v %v", res, err)
		}
	})
}

func TestBackendKeysTTL(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now, DefaultTTL: time.Hour})
		mustApply(t, p.Pad,
			KeyOp{Op: OpSet, Key: "fixed", Value: json.RawMessage(`1`), TTL: ttl(60)},
			KeyOp{Op: OpSet, Key: "sliding", Value: json.RawMessage(`2`), TTL: ttl(60), Sliding: true},
			KeyOp{Op: OpSet, Key: "forever", Value: json.RawMessage(`3`), TTL: ttl(0)},
			KeyOp{Op: OpSet, Key: "default", Value: json.RawMessage(`4`)},
		)
		q := p.another(Options{Now: clock.Now})
		clock.Add(40 * time.Second)
		// The model reads: the sliding key is renewed from now.
		if got := keyNames(t, p.Pad, KeyFilter{}, true); got != "default fixed forever sliding" {
			t.Fatalf("at 40s: %q", got)
		}
		clock.Add(30 * time.Second) // 70s: fixed is gone, sliding was renewed at 40s
		if got := keyNames(t, q, KeyFilter{}, false); got != "default forever sliding" {
			t.Fatalf("at 70s: %q", got)
		}
		// A read that does not renew (the resource, the CLI) leaves it.
		clock.Add(31 * time.Second) // 101s: 61s after the renewal
		if got := keyNames(t, q, KeyFilter{}, false); got != "default forever" {
			t.Fatalf("at 101s: %q", got)
		}
		if _, ok, _ := p.Get("sliding"); ok {
			t.Fatal("expired sliding key read back")
		}
		// Expired keys are still stored until a write sweeps them.
		data, _, err := p.keyStore().readKeys()
		if err != nil || !strings.Contains(string(data), `"fixed"`) {
			t.Fatalf("before the sweep: %s %v", data, err)
		}
		clock.Add(time.Hour) // default (1h) goes too
		res := mustApply(t, p.Pad, KeyOp{Op: OpSet, Key: "new", Value: json.RawMessage(`5`)})
		if !strings.Contains(res.Diff, "+new = 5") {
			t.Fatalf("diff %q", res.Diff)
		}
		data, _, _ = p.keyStore().readKeys()
		for _, gone := range []string{`"fixed"`, `"sliding"`, `"default"`} {
			if strings.Contains(string(data), gone) {
				t.Fatalf("the sweep left %s: %s", gone, data)
			}
		}
		if got := keyNames(t, q, KeyFilter{}, false); got != "forever new" {
			t.Fatalf("after the sweep: %q", got)
		}
		// Setting an expired key again starts it afresh.
		mustApply(t, p.Pad, KeyOp{Op: OpSet, Key: "fixed", Value: json.RawMessage(`6`), TTL: ttl(1)})
		if v, ok, _ := q.Get("fixed"); !ok || string(v) != "6" {
			t.Fatalf("re-set: %s %v", v, ok)
		}
		if _, err := p.UpdateKeys("t", []KeyOp{{Op: OpSet, Key: "s", Value: json.RawMessage(`1`), TTL: ttl(0), Sliding: true}}); !errors.Is(err, ErrBadPatch) {
			t.Fatalf("sliding without ttl: %v", err)
		}
	})
}

func TestBackendKeysNamespacesAndTags(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		set := func(name string, tags ...string) KeyOp {
			return KeyOp{Op: OpSet, Key: name, Value: json.RawMessage(`true`), Tags: tags}
		}
		mustApply(t, p.Pad,
			set("top", "a"),
			set("task1:cursor", "a", "b"),
			set("task1:probe:last", "b"),
			set("task1:probe:next"),
			set("task10:x", "a"),
			set("task2:probe:last", "c"),
		)
		for _, tt := range []struct {
			f    KeyFilter
			want string
		}{
			{KeyFilter{}, "task1:cursor task1:probe:last task1:probe:next task10:x task2:probe:last top"},
			{KeyFilter{Names: []string{"task1:"}}, "task1:cursor task1:probe:last task1:probe:next"},
			{KeyFilter{Names: []string{"task1:probe:"}}, "task1:probe:last task1:probe:next"},
			{KeyFilter{Names: []string{"task1:probe:*"}}, "task1:probe:last task1:probe:next"},
			{KeyFilter{Names: []string{"task1:probe:last", "top"}}, "task1:probe:last top"},
			{KeyFilter{Names: []string{"task1"}}, ""},
			{KeyFilter{Tags: []string{"a"}}, "task1:cursor task10:x top"},
			{KeyFilter{Tags: []string{"b", "c"}}, "task1:cursor task1:probe:last task2:probe:last"},
			{KeyFilter{Names: []string{"task1:"}, Tags: []string{"b"}}, "task1:cursor task1:probe:last"},
		} {
			if got := keyNames(t, p.Pad, tt.f, false); got != tt.want {
				t.Errorf("%+v: got %q, want %q", tt.f, got, tt.want)
			}
		}
		keys, _ := p.Keys(KeyFilter{Names: []string{"task1:probe:last"}}, false)
		if len(keys) != 1 || keys[0].Namespace() != "task1:probe" {
			t.Fatalf("namespace of %+v", keys)
		}
	})
}

// Every write sweeps expired keys, a section patch too; unreadable keys
// are reported on read and moved aside (not overwritten) by the next
// write.
func TestBackendKeysSweepAndQuarantine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now})
		mustApply(t, p.Pad, KeyOp{Op: OpSet, Key: "a", Value: json.RawMessage(`1`), TTL: ttl(1)})
		clock.Add(2 * time.Second)
		if _, err := p.Apply("t", []Patch{{Section: "Next", Op: OpReplace, Content: "go"}}, nil); err != nil {
			t.Fatal(err)
		}
		if data, _, _ := p.keyStore().readKeys(); strings.Contains(string(data), `"a"`) {
			t.Fatalf("a section write did not sweep: %s", data)
		}

		lk, err := p.store.lock()
		if err != nil {
			t.Fatal(err)
		}
		if err := p.keyStore().writeKeys(lk, []byte(`{"keys": {"x": `), nil); err != nil {
			t.Fatal(err)
		}
		lk.unlock()
		out, err := p.Read(nil)
		if err != nil || !strings.Contains(out, "the keyed values do not parse") {
			t.Fatalf("read of broken keys: %s %v", out, err)
		}
		res := mustApply(t, p.Pad, KeyOp{Op: OpSet, Key: "b", Value: json.RawMessage(`2`)})
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "moved to") {
			t.Fatalf("write over broken keys: %+v", res)
		}
		if got := keyNames(t, p.Pad, KeyFilter{}, false); got != "b" {
			t.Fatalf("keys after the quarantine: %q", got)
		}
	})
}

func TestValidateReportsBrokenKeys(t *testing.T) {
	p := newPad(t, Options{})
	mustApply(t, p, KeyOp{Op: OpSet, Key: "a", Value: json.RawMessage(`1`)})
	if err := os.WriteFile(filepath.Join(p.Dir(), keysFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := p.Validate()
	if err != nil || len(r.Broken) != 1 || !strings.Contains(r.Broken[0], "keyed values do not parse") {
		t.Fatalf("validate: %+v %v", r, err)
	}
	// `pad validate` does not pass it.
	var out, errOut strings.Builder
	if code := Command(p, "validate", 0, CommandIO{Stdout: &out, Stderr: &errOut}); code != 1 || !strings.Contains(out.String(), "broken: the keyed values do not parse") {
		t.Fatalf("pad validate on a corrupt keys.json: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// A key operation refused while applying (too many keys) leaves the
// section patches of the same call unwritten too.
func TestBackendTooManyKeysChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		ops := make([]KeyOp, maxKeys)
		for i := range ops {
			ops[i] = KeyOp{Op: OpSet, Key: fmt.Sprintf("k%d", i), Value: json.RawMessage(`1`)}
		}
		mustApply(t, p.Pad, ops...)
		before := p.doc()
		_, err := p.Apply("t", []Patch{{Section: "Task", Op: OpReplace, Content: "must not land"}}, []KeyOp{{Op: OpSet, Key: "one-more", Value: json.RawMessage(`1`)}})
		if !errors.Is(err, ErrBadPatch) || !strings.Contains(err.Error(), "at most 1000") {
			t.Fatalf("err = %v", err)
		}
		if p.doc() != before {
			t.Fatal("the section patch landed though the call was refused")
		}
		if keys, _ := p.Keys(KeyFilter{}, false); len(keys) != maxKeys {
			t.Fatalf("%d keys", len(keys))
		}
	})
}
