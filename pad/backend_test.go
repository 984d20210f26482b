package pad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// The tests in this file run the pad's behaviour against every backend:
// what holds for a directory must hold for Redis.

// testPad is a pad plus backend-specific ways to look behind it, as a
// person with a shell or redis-cli would.
type testPad struct {
	*Pad
	// another opens the same pad again through a fresh handle (another
	// process or host would).
	another func(opts Options) *Pad
	// doc returns the stored document, "" when there is none.
	doc func() string
	// setDoc replaces the stored document by hand.
	setDoc func(data []byte)
	// broken returns the quarantined documents by name.
	broken func() map[string]string
}

type backend struct {
	name string
	// start prepares the backend for one test and returns how to open
	// fresh pads on it (each call a new, empty pad).
	start func(t *testing.T) func(opts Options) *testPad
}

var backends = []backend{
	{"file", startFile},
	{"redis", startRedis},
}

// forEachBackend runs fn once per backend, as subtests.
func forEachBackend(t *testing.T, fn func(t *testing.T, open func(opts Options) *testPad)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fn(t, b.start(t))
		})
	}
}

func startFile(t *testing.T) func(opts Options) *testPad {
	return func(opts Options) *testPad {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "pad")
		p, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		return &testPad{
			Pad: p,
			another: func(opts Options) *Pad {
				q, err := Open(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				return q
			},
			doc: func() string {
				data, err := os.ReadFile(p.Path())
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				return string(data)
			},
			setDoc: func(data []byte) {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p.Path(), data, 0o644); err != nil {
					t.Fatal(err)
				}
			},
			broken: func() map[string]string {
				out := map[string]string{}
				matches, _ := filepath.Glob(p.Path() + ".broken-*")
				for _, m := range matches {
					out[m] = readFile(t, m)
				}
				return out
			},
		}
	}
}

// redisTestEnv is one redis-server and a raw client to look at it.
type redisTestEnv struct {
	srv *testredis.Server
	rdb *redis.Client
	seq atomic.Int64
}

func newRedisEnv(t testing.TB) *redisTestEnv {
	t.Helper()
	srv := testredis.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return &redisTestEnv{srv: srv, rdb: rdb}
}

// conn returns a new client for the server, as another process would
// make; closed when the test ends.
func (e *redisTestEnv) conn(t testing.TB, o RedisOptions) *Redis {
	t.Helper()
	if o.URL == "" {
		o.URL = e.srv.URL()
	}
	r, err := NewRedis(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// keyBase is where pad id lives with the default prefix.
func keyBase(id string) string { return DefaultRedisPrefix + ":{" + id + "}" }

func startRedis(t *testing.T) func(opts Options) *testPad {
	env := newRedisEnv(t)
	r := env.conn(t, RedisOptions{})
	return func(opts Options) *testPad {
		t.Helper()
		return env.open(t, r, "run:r"+strconv.FormatInt(env.seq.Add(1), 10), opts)
	}
}

func (e *redisTestEnv) open(t testing.TB, r *Redis, id string, opts Options) *testPad {
	t.Helper()
	p, err := r.Open(id, opts)
	if err != nil {
		t.Fatal(err)
	}
	base := keyBase(id)
	ctx := context.Background()
	return &testPad{
		Pad: p,
		another: func(opts Options) *Pad {
			q, err := e.conn(t, RedisOptions{}).Open(id, opts)
			if err != nil {
				t.Fatal(err)
			}
			return q
		},
		doc: func() string {
			s, err := e.rdb.Get(ctx, base+":doc").Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatal(err)
			}
			return s
		},
		setDoc: func(data []byte) {
			if err := e.rdb.Set(ctx, base+":doc", data, 0).Err(); err != nil {
				t.Fatal(err)
			}
		},
		broken: func() map[string]string {
			out := map[string]string{}
			keys, err := e.rdb.Keys(ctx, base+":broken:*").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				out[k] = e.rdb.Get(ctx, k).Val()
			}
			return out
		},
	}
}

func ledgerOf(t *testing.T, p *Pad) ([]Entry, int) {
	t.Helper()
	entries, bad, err := p.store.readLedger()
	if err != nil {
		t.Fatal(err)
	}
	return entries, bad
}

func stampOf(t *testing.T, p *Pad) string {
	t.Helper()
	s, err := p.store.stamp()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBackendRoundTrip(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		res := mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "find the leak"},
			Patch{Section: "Plan", Op: OpAppend, Content: "reproduce\nbisect"})
		if !res.Changed || !strings.Contains(res.Diff, "+1. [ ] reproduce") {
			t.Fatalf("result: %+v", res)
		}
		want := "## Task\nfind the leak\n\n## Plan\n1. [ ] reproduce\n2. [ ] bisect\n"
		if got := p.doc(); !strings.HasPrefix(got, want) {
			t.Fatalf("stored:\n%s", got)
		}
		// A second handle (another process) sees the write, and its own
		// write is seen back.
		q := p.another(Options{})
		out, err := q.Read(nil)
		if err != nil || !strings.Contains(out, "find the leak") {
			t.Fatalf("other handle: %v\n%s", err, out)
		}
		mustUpdate(t, q, Patch{Section: "Plan", Op: OpCheck, Content: "1"})
		if out, _ := p.Read(nil); !strings.Contains(out, "1. [x] reproduce") {
			t.Fatalf("first handle does not see the second's write:\n%s", out)
		}
		text, err := p.Text()
		if err != nil || string(text) != p.doc() {
			t.Fatalf("Text() = %q, %v", text, err)
		}
	})
}

func TestBackendNoOpWritesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		empty := stampOf(t, p.Pad)
		if res, err := p.Update(nil); err != nil || res.Changed {
			t.Fatalf("Update(nil) = %+v, %v", res, err)
		}
		if p.doc() != "" || stampOf(t, p.Pad) != empty {
			t.Fatal("an empty update on a fresh pad wrote something")
		}
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "t"})
		before, versions := stampOf(t, p.Pad), mustHistory(t, p.Pad)
		for _, patches := range [][]Patch{{}, {{Section: "Task", Op: OpReplace, Content: "t"}}} {
			res := mustUpdate(t, p.Pad, patches...)
			if res.Changed || res.Diff != "" {
				t.Fatalf("no-op %v reported a change: %+v", patches, res)
			}
		}
		if stampOf(t, p.Pad) != before || len(mustHistory(t, p.Pad)) != len(versions) {
			t.Fatal("a no-op wrote the pad or its history")
		}
	})
}

func mustHistory(t *testing.T, p *Pad) []Version {
	t.Helper()
	v, err := p.History()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestBackendPatchOps(t *testing.T) {
	sections := []Section{{Name: "Plan", Cap: 1000, Numbered: true}, {Name: "Notes", Cap: 1000}}
	tests := []struct {
		name    string
		start   string
		patches []Patch
		want    string
	}{
		{"append numbered", "", []Patch{{Section: "Plan", Op: OpAppend, Content: "one\n- two"}}, "## Plan\n1. [ ] one\n2. [ ] two\n\n## Notes\n"},
		{"check", "## Plan\n1. [ ] a\n2. [ ] b\n", []Patch{{Section: "Plan", Op: OpCheck, Content: "2"}}, "## Plan\n1. [ ] a\n2. [x] b\n\n## Notes\n"},
		{"replace one section", "## Plan\n1. [ ] a\n\n## Notes\n- keep\n", []Patch{{Section: "Plan", Op: OpReplace, Content: "1. [ ] new"}}, "## Plan\n1. [ ] new\n\n## Notes\n- keep\n"},
		{"remove", "## Notes\n- alpha\n- beta\n", []Patch{{Section: "Notes", Op: OpRemove, Content: "alpha"}}, "## Plan\n\n## Notes\n- beta\n"},
		{"clear", "## Plan\n1. [ ] a\n\n## Notes\n- b\n", []Patch{{Section: "Notes", Op: OpClear}}, "## Plan\n1. [ ] a\n\n## Notes\n"},
	}
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := open(Options{Sections: sections})
				if tt.start != "" {
					p.setDoc([]byte(tt.start))
				}
				mustUpdate(t, p.Pad, tt.patches...)
				if got := p.doc(); got != tt.want {
					t.Errorf("stored:\n%q\nwant:\n%q", got, tt.want)
				}
			})
		}
	})
}

func TestBackendInvalidPatchChangesNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "keep me"})
		before, stamp, versions := p.doc(), stampOf(t, p.Pad), len(mustHistory(t, p.Pad))
		_, err := p.Update([]Patch{{Section: "Findings", Op: OpAppend, Content: "would be lost"}, {Section: "Vibes", Op: OpAppend, Content: "x"}})
		var pe *PatchError
		if !errors.Is(err, ErrUnknownSection) || !errors.As(err, &pe) || pe.Index != 1 {
			t.Fatalf("err = %v", err)
		}
		if p.doc() != before || stampOf(t, p.Pad) != stamp || len(mustHistory(t, p.Pad)) != versions {
			t.Fatal("a rejected update changed the pad")
		}
	})
}

func TestBackendOverCapWarns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{Sections: []Section{{Name: "Notes", Cap: 20, Purpose: "p"}}})
		long := strings.Repeat("x", 50)
		res := mustUpdate(t, p.Pad, Patch{Section: "Notes", Op: OpAppend, Content: long})
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"Notes" is over its cap: 52/20`) {
			t.Fatalf("warnings = %q", res.Warnings)
		}
		if !strings.Contains(p.doc(), "- "+long+"\n") {
			t.Fatal("text was cut")
		}
	})
}

func TestBackendHistoryDiffRestore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{History: 3})
		for i, c := range []string{"one", "two", "three", "four"} {
			mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: c})
			if got, want := len(mustHistory(t, p.Pad)), min(i+1, 3); got != want {
				t.Fatalf("after %d saves history has %d versions, want %d", i+1, got, want)
			}
		}
		vs := mustHistory(t, p.Pad)
		for i := 1; i < len(vs); i++ {
			if vs[i].N != i+1 || !vs[i].Time.Before(vs[i-1].Time) {
				t.Fatalf("history not newest first: %+v", vs)
			}
		}
		d, err := p.Diff(1)
		if err != nil || !strings.Contains(d, "-three\n+four\n") {
			t.Fatalf("Diff(1) = %q, %v", d, err)
		}
		res, err := p.Restore(2)
		if err != nil || !res.Changed || !strings.Contains(res.Diff, "-four\n+three\n") {
			t.Fatalf("Restore(2) = %+v, %v", res, err)
		}
		if !strings.Contains(p.doc(), "## Task\nthree\n") {
			t.Fatalf("after restore:\n%s", p.doc())
		}
		if _, err := p.Restore(9); !errors.Is(err, ErrNoVersion) {
			t.Fatalf("Restore(9) err = %v", err)
		}
		// A hand edit is seen by the next call and kept as its own version.
		p.setDoc([]byte(strings.Replace(p.doc(), "three", "hand edit", 1)))
		res = mustUpdate(t, p.Pad, Patch{Section: "Next", Op: OpAppend, Content: "go"})
		if !strings.Contains(res.Diff, "+- go") || strings.Contains(res.Diff, "hand edit") {
			t.Fatalf("update not based on the hand edit:\n%s", res.Diff)
		}
		if d, _ := p.Diff(2); !strings.Contains(d, "-three\n+hand edit\n") {
			t.Fatalf("Diff(2) is not the hand edit:\n%s", d)
		}
	})
}

func TestBackendStructured(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{Format: FormatJSON, Schema: fixture(t, "schema.json"), MaxDepth: 4})
		if _, err := p.Merge([]byte(`{"task":"t","env":{"a":1}}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Merge([]byte(`{"env":{"b":2},"__proto__":{"x":1}}`)); err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(p.doc()), &got); err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(got); string(b) != `{"env":{"a":1,"b":2},"task":"t"}` {
			t.Fatalf("state = %s", b)
		}
		before := p.doc()
		if _, err := p.Merge([]byte(`{"step":-1}`)); !errors.Is(err, ErrSchema) {
			t.Fatalf("schema violation: %v", err)
		}
		if p.doc() != before {
			t.Fatal("a rejected merge changed the state")
		}
		if _, err := p.Update(nil); !errors.Is(err, ErrWrongFormat) {
			t.Fatalf("patches on a structured pad: %v", err)
		}
		// A broken state is quarantined and the last good one restored.
		p.setDoc([]byte(`{"task": "half`))
		out, err := p.Read(nil)
		if err != nil || !strings.Contains(out, "pad.json did not parse") || !strings.Contains(out, `"task": "t"`) {
			t.Fatalf("read of a broken state: %v\n%s", err, out)
		}
		if p.doc() != before {
			t.Fatalf("restored state:\n%s", p.doc())
		}
	})
}

func TestBackendTTLAndCompaction(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p := open(Options{EntryTTL: time.Hour, Now: func() time.Time { return now }})
		for i, tags := range [][]string{{"db"}, {"api"}, {"db", "api"}, nil} {
			if _, err := p.AppendBy("alice", fmt.Sprintf("old %d", i), tags); err != nil {
				t.Fatal(err)
			}
		}
		now = now.Add(2 * time.Hour)
		if _, err := p.Append("fresh", []string{"db"}); err != nil {
			t.Fatal(err)
		}
		if before, _ := ledgerOf(t, p.Pad); len(before) != 5 || before[0].By != "alice" {
			t.Fatalf("ledger: %+v", before)
		}
		v, err := p.View([]string{"db"})
		if err != nil || len(v.Entries) != 1 || v.Entries[0].Note != "fresh" {
			t.Fatalf("view: %+v, %v", v, err)
		}
		// 4 of 5 expired: the read compacted the ledger.
		if after, _ := ledgerOf(t, p.Pad); len(after) != 1 {
			t.Fatalf("after compaction the ledger has %d entries", len(after))
		}
		if n, err := p.Compact(); n != 0 || err != nil {
			t.Fatalf("second compaction: %d, %v", n, err)
		}
	})
}

func TestBackendMaxTokensFolds(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		p := open(Options{MaxTokens: 400, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
		mustUpdate(t, p.Pad, Patch{Section: "Findings", Op: OpAppend, Content: strings.Repeat("f", 200)})
		for i := 0; i < 40; i++ {
			if _, err := p.Append(fmt.Sprintf("finding number %02d with some words", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		out, err := p.Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		if n := roughCount(out); n > 400 {
			t.Fatalf("rendering is %d tokens, over 400", n)
		}
		if !strings.Contains(out, strings.Repeat("f", 200)) || !strings.Contains(out, "finding number 39") ||
			strings.Contains(out, "finding number 00") || !strings.Contains(out, " earlier findings omitted") {
			t.Fatalf("fold:\n%s", out)
		}
	})
}

func TestBackendQuarantine(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		now := time.Unix(1_800_000_000, 0)
		p := open(Options{Now: func() time.Time { return now }})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "good version"})
		good := p.doc()
		broken := fixture(t, "broken-unknown.md")
		p.setDoc(broken)

		if _, err := p.Validate(); !errors.Is(err, ErrMalformed) {
			t.Fatalf("Validate err = %v", err)
		}
		// Show reports and changes nothing.
		if out, err := p.Show(); err != nil || !strings.Contains(out, "does not parse") || !strings.Contains(out, "good version") {
			t.Fatalf("show: %v\n%s", err, out)
		}
		if p.doc() != string(broken) || len(p.broken()) != 0 {
			t.Fatal("Show touched the broken document")
		}
		out, err := p.Read(nil)
		if err != nil {
			t.Fatal(err)
		}
		moved := p.broken()
		if len(moved) != 1 {
			t.Fatalf("quarantined: %v", moved)
		}
		for name, data := range moved {
			if !strings.Contains(name, "1800000000") || data != string(broken) {
				t.Fatalf("quarantined %s = %q", name, data)
			}
			if !strings.HasPrefix(out, "# Scratchpad\n\n> **Note:** pad.md did not parse") || !strings.Contains(out, "It was moved to "+name+" and the last good version") {
				t.Fatalf("read does not start with the note:\n%s", out)
			}
		}
		if p.doc() != good {
			t.Fatalf("restored:\n%s", p.doc())
		}
		if out, _ := p.Read(nil); strings.Contains(out, "Note:") {
			t.Fatalf("note shown twice:\n%s", out)
		}
		// A second breakage in the same second gets its own name.
		p.setDoc(broken)
		if _, err := p.Read(nil); err != nil || len(p.broken()) != 2 {
			t.Fatalf("second quarantine: %v, %v", err, p.broken())
		}
	})
}

func TestBackendQuarantineWithoutHistoryKeepsText(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		p.setDoc(fixture(t, "broken-unknown.md"))
		res := mustUpdate(t, p.Pad, Patch{Section: "Next", Op: OpAppend, Content: "go on"})
		if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "history had no good version") {
			t.Fatalf("warnings = %q", res.Warnings)
		}
		if got := p.doc(); !strings.Contains(got, "Find why the nightly export drops rows.") || !strings.Contains(got, "- go on") {
			t.Fatalf("salvaged pad lost content:\n%s", got)
		}
		if out, _ := p.Read(nil); !strings.Contains(out, `not kept: text under unknown heading "Vibes"`) {
			t.Fatalf("next read lacks the note:\n%s", out)
		}
	})
}

// Read-modify-writes from many goroutines through two handles (as two
// processes would) take turns: none is lost.
func TestBackendConcurrentUpdatesLoseNothing(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		opts := Options{Sections: []Section{{Name: "Log", Cap: 0}}}
		p := open(opts)
		handles := []*Pad{p.Pad, p.another(opts)}
		const n = 40
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				if _, err := handles[i%2].Update([]Patch{{Section: "Log", Op: OpAppend, Content: "item " + strconv.Itoa(i)}}); err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		if c := strings.Count(p.doc(), "\n- item "); c != n {
			t.Fatalf("%d of %d read-modify-writes survived:\n%s", c, n, p.doc())
		}
	})
}

// Compactions running while appends land never drop a fresh entry.
func TestBackendCompactionDuringAppends(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{EntryTTL: 24 * time.Hour})
		old := Entry{Time: time.Now().Add(-48 * time.Hour), Note: "expired"}
		if err := p.store.appendEntry(old); err != nil {
			t.Fatal(err)
		}
		const workers, each = 4, 100
		appended := make(chan error, 1)
		go func() {
			appended <- runWorkers(workers, each, func(w, i int) error {
				_, err := p.Append(fmt.Sprintf("w%d-%d", w, i), nil)
				return err
			})
		}()
		dropped := 0
		for i := 0; i < 20; i++ {
			n, err := p.Compact()
			if err != nil {
				t.Fatal(err)
			}
			dropped += n
		}
		if err := <-appended; err != nil {
			t.Fatal(err)
		}
		entries, bad := ledgerOf(t, p.Pad)
		if len(entries) != workers*each || bad != 0 || dropped != 1 {
			t.Fatalf("%d entries, %d bad, %d dropped; want %d, 0, 1", len(entries), bad, dropped, workers*each)
		}
	})
}

func TestBackendCommand(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "v1"})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "v2"})
		if _, err := p.Append("a finding", nil); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			sub      string
			n        int
			code     int
			contains string
		}{
			{"show", 0, 0, "## Task\nv2"},
			{"validate", 0, 0, ": ok; ledger: 1 entries"},
			{"diff", 1, 0, "-v1\n+v2\n"},
			{"diff", 3, 1, "no such history version: 3 (history has 2)"},
			{"history", 0, 0, "(current)"},
		}
		for _, tt := range tests {
			code, out, errOut := runCommand(p.Pad, tt.sub, tt.n, "")
			if code != tt.code || !strings.Contains(out+errOut, tt.contains) {
				t.Errorf("%s %d: exit %d, out %q, err %q; want exit %d containing %q", tt.sub, tt.n, code, out, errOut, tt.code, tt.contains)
			}
		}
		if code, out, _ := runCommand(p.Pad, "restore", 2, ""); code != 0 || !strings.Contains(out, "-v2\n+v1\n") || !strings.Contains(p.doc(), "## Task\nv1\n") {
			t.Fatalf("restore: %d %s", code, out)
		}
		script := filepath.Join(t.TempDir(), "ed.sh")
		os.WriteFile(script, []byte("#!/bin/sh\nsed -i 's/^v1$/edited/' \"$1\"\n"), 0o755)
		if code, out, errOut := runCommand(p.Pad, "edit", 0, script); code != 0 || !strings.Contains(out, "-v1\n+edited\n") {
			t.Fatalf("edit: %d %q %q", code, out, errOut)
		}
		p.setDoc(fixture(t, "broken-unknown.md"))
		if code, _, errOut := runCommand(p.Pad, "validate", 0, ""); code != 1 || !strings.Contains(errOut, `unknown section heading "Vibes"`) {
			t.Fatalf("validate broken: %d %s", code, errOut)
		}
	})
}

// A subscriber hears of a change made through another handle (another
// process or host) within the poll interval.
func TestBackendNotifiesChangesMadeElsewhere(t *testing.T) {
	old := pollInterval
	pollInterval = 5 * time.Millisecond
	t.Cleanup(func() { pollInterval = old })
	forEachBackend(t, func(t *testing.T, open func(Options) *testPad) {
		p := open(Options{})
		h := newHarness(t, func(context.Context) (*Pad, error) { return p.Pad, nil }, Options{})
		ctx, sess := h.session("s")
		h.subscribe(ctx, sess)
		other := p.another(Options{})
		for _, change := range []func() error{
			func() error { _, err := other.Append("from another host", nil); return err },
			func() error {
				_, err := other.Update([]Patch{{Section: "Next", Op: OpReplace, Content: "x"}})
				return err
			},
		} {
			if err := change(); err != nil {
				t.Fatal(err)
			}
			select {
			case n := <-sess.ch:
				if n != ResourceURI {
					t.Fatalf("notification %+v", n)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no notification for a change made through another handle")
			}
		}
		h.unsubscribe(sess)
	})
}
