package pad

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// Tests of what only the Redis backend has: leases and fencing, a server
// that goes away, URLs with passwords, key layout. The behaviour shared
// with the file backend is in backend_test.go.

// waitGone polls until key no longer exists (a lease ran out). The
// deadline is a safety net, not a timing assertion.
func waitGone(t *testing.T, rdb *redis.Client, key string) {
	t.Helper()
	if !testwait.Until(testwait.Timeout, func() bool { return rdb.Exists(context.Background(), key).Val() != 1 }) {
		t.Fatalf("%s never expired", key)
	}
}

// A writer whose lease ran out before it wrote is refused, whatever
// happened meanwhile: the document, history and version stay as the
// other writer left them.
func TestRedisFencingRefusesAWriteAfterTheLeaseRanOut(t *testing.T) {
	tests := []struct {
		name string
		// meanwhile runs after our lease ran out; other is a second
		// handle on the pad. It returns what the document must be.
		meanwhile func(t *testing.T, other *Pad) (release func())
	}{
		{"nobody took the lock", func(*testing.T, *Pad) func() { return func() {} }},
		{"another writer holds the lock", func(t *testing.T, other *Pad) func() {
			lk, err := other.store.lock()
			if err != nil {
				t.Fatal(err)
			}
			return lk.unlock
		}},
		{"another writer wrote and left", func(t *testing.T, other *Pad) func() {
			mustUpdate(t, other, Patch{Section: "Task", Op: OpReplace, Content: "the other writer's version"})
			return func() {}
		}},
	}
	env := newRedisEnv(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "run:fence" + string(rune('a'+i))
			short := env.conn(t, RedisOptions{LockLease: 50 * time.Millisecond})
			p := env.open(t, short, id, Options{})
			mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "first"})
			other := p.another(Options{})

			var release func()
			var expected, stamp string
			var versions int
			beforeRedisCommit = func() {
				beforeRedisCommit = nil // once: the other writer commits too
				waitGone(t, env.rdb, keyBase(id)+":lock")
				release = tt.meanwhile(t, other)
				expected, stamp, versions = p.doc(), stampOf(t, p.Pad), len(mustHistory(t, p.Pad))
			}
			t.Cleanup(func() { beforeRedisCommit = nil })
			_, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "must not land"}})
			release()
			if !errors.Is(err, ErrLockLost) {
				t.Fatalf("err = %v, want ErrLockLost", err)
			}
			if !strings.Contains(err.Error(), `run "fence`) || !strings.Contains(err.Error(), "write pad.md") {
				t.Errorf("error does not name the pad and the operation: %v", err)
			}
			if p.doc() != expected || strings.Contains(p.doc(), "must not land") {
				t.Fatalf("document changed by the refused write:\n%s", p.doc())
			}
			if stampOf(t, p.Pad) != stamp || len(mustHistory(t, p.Pad)) != versions {
				t.Fatal("the refused write touched history or the version")
			}
			// The pad is not stuck: the next write goes through.
			mustUpdate(t, p.Pad, Patch{Section: "Next", Op: OpReplace, Content: "after"})
		})
	}
}

// A lock held by someone else is waited for, boundedly.
func TestRedisLockWaitIsBounded(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{LockWait: 50 * time.Millisecond}), "run:busy", Options{})
	holder := p.another(Options{})
	lk, err := holder.store.lock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "x"}})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), `run "busy": lock:`) {
		t.Fatalf("err = %v, want ErrLocked naming the pad", err)
	}
	if p.doc() != "" {
		t.Fatal("a write that never got the lock changed the pad")
	}
	lk.unlock()
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "x"})
	// Appends take no lock: a held lock never delays them.
	lk, _ = holder.store.lock()
	defer lk.unlock()
	if _, err := p.Append("while locked", nil); err != nil {
		t.Fatal(err)
	}
}

// Redis going away mid-session gives errors naming the pad and the
// operation (never a panic); once it is back the pad works again.
func TestRedisDownAndBack(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{Timeout: 2 * time.Second}), "run:r1", Options{})
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "before the crash"})
	env.srv.Kill()

	name := `pad ` + env.srv.URL() + ` run "r1": `
	ops := []struct {
		name string
		op   string
		call func() error
	}{
		{"update", "lock", func() error { _, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "x"}}); return err }},
		{"append", "append to ledger", func() error { _, err := p.Append("x", nil); return err }},
		{"read", "read pad.md", func() error { _, err := p.Read(nil); return err }},
		{"show", "read pad.md", func() error { _, err := p.Show(); return err }},
		{"validate", "read ledger", func() error { _, err := p.Validate(); return err }},
		{"history", "read history", func() error { _, err := p.History(); return err }},
		{"stamp", "read version", func() error { _, err := p.store.stamp(); return err }},
	}
	for _, o := range ops {
		t.Run(o.name, func(t *testing.T) {
			err := o.call()
			if err == nil {
				t.Fatal("no error with Redis down")
			}
			if !strings.HasPrefix(err.Error(), name+o.op+": ") {
				t.Fatalf("error %q does not start with %q", err, name+o.op+": ")
			}
		})
	}
	if _, ok := stamp(p.Pad); ok {
		t.Fatal("a stamp was taken with Redis down")
	}

	env.srv.Restart() // empty: nothing was persisted
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "after the restart"})
	if _, err := p.Append("back", nil); err != nil {
		t.Fatal(err)
	}
	out, err := p.Read(nil)
	if err != nil || !strings.Contains(out, "after the restart") || !strings.Contains(out, "back") {
		t.Fatalf("after restart: %v\n%s", err, out)
	}
}

// A password in the URL authenticates and is never shown: not in
// locations, not in errors, not for a URL that does not parse.
func TestRedisPasswordNeverShown(t *testing.T) {
	const secret = "s3cret-pw"
	srv := testredis.Start(t, "--requirepass", secret)
	good, err := NewRedis(RedisOptions{URL: "redis://:" + secret + "@" + srv.Addr + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	p, err := good.Open("run:auth", Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, p, Patch{Section: "Task", Op: OpReplace, Content: "authenticated"})
	if err := good.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{p.Location(), p.Path(), good.String()} {
		if strings.Contains(s, secret) || !strings.Contains(s, "xxxxx") {
			t.Errorf("%q shows the password or does not redact it", s)
		}
	}

	wrong, err := NewRedis(RedisOptions{URL: "redis://user:wrong-" + secret + "@" + srv.Addr + "/0"})
	if err != nil {
		t.Fatal(err)
	}
	defer wrong.Close()
	q, _ := wrong.Open("run:auth", Options{})
	_, err = q.Read(nil)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "user:xxxxx@") {
		t.Fatalf("wrong password: %v", err)
	}
	if err := wrong.Ping(context.Background()); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("ping with a wrong password: %v", err)
	}

	for _, bad := range []string{
		"redis://u:" + secret + "@host:99999/0",
		"redis://u:" + secret + "@host/notadb",
		"http://u:" + secret + "@host/0",
		"redis://u:" + secret + "@ho st/0",
		"redis://u:" + secret + "@/0",
		"redis://u:" + secret + "@host/0?dial_timeout=forever",
	} {
		_, err := NewRedis(RedisOptions{URL: bad})
		if !errors.Is(err, ErrOptions) || strings.Contains(err.Error(), secret) {
			t.Errorf("NewRedis(%q) = %v: want ErrOptions without the password", strings.ReplaceAll(bad, secret, "…"), err)
		}
	}
}

func TestRedisRejectsBadIDsAndPrefixes(t *testing.T) {
	env := newRedisEnv(t)
	r := env.conn(t, RedisOptions{})
	for _, id := range []string{"", "a{b", "a}b", "has space", "tab\there", strings.Repeat("x", 201)} {
		if _, err := r.Open(id, Options{}); !errors.Is(err, ErrOptions) {
			t.Errorf("Open(%q) = %v, want ErrOptions", id, err)
		}
	}
	for _, prefix := range []string{"a{b}", "sp ace", strings.Repeat("p", 65)} {
		if _, err := NewRedis(RedisOptions{URL: env.srv.URL(), Prefix: prefix}); !errors.Is(err, ErrOptions) {
			t.Errorf("prefix %q accepted: %v", prefix, err)
		}
	}
}

// Every key of a pad carries the pad id as its hash tag, so a cluster
// keeps them on one slot and the scripts may touch them together.
func TestRedisKeysShareOneHashTag(t *testing.T) {
	env := newRedisEnv(t)
	r := env.conn(t, RedisOptions{Prefix: "team.a"})
	p, err := r.Open("agent:main", Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, p, Patch{Section: "Task", Op: OpReplace, Content: "t"})
	p.Append("a", nil)
	env.rdb.Set(context.Background(), "team.a:{agent:main}:doc", "## Vibes\n", 0)
	p.Read(nil) // quarantine: a broken key and a notice
	keys := env.rdb.Keys(context.Background(), "*").Val()
	if len(keys) < 5 { // doc, history, ledger, version, broken (the notice was shown)
		t.Fatalf("keys: %v", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "team.a:{agent:main}:") {
			t.Errorf("key %q is outside the pad's hash tag", k)
		}
	}
}

// The subscription stamp moves with every change from any client, hand
// edits with redis-cli included, and not with reads.
func TestRedisStampSeesOtherClients(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{}), "run:stamp", Options{})
	other := p.another(Options{})
	ctx := context.Background()
	changes := []struct {
		name string
		do   func() error
	}{
		{"append from another client", func() error { _, err := other.Append("x", nil); return err }},
		{"update from another client", func() error {
			_, err := other.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "y"}})
			return err
		}},
		{"document set by hand", func() error {
			return env.rdb.Set(ctx, keyBase("run:stamp")+":doc", "## Task\nby hand\n", 0).Err()
		}},
		{"entry pushed by hand", func() error {
			return env.rdb.RPush(ctx, keyBase("run:stamp")+":ledger", `{"ts":"2026-01-01T00:00:00Z","note":"hand"}`).Err()
		}},
	}
	last := stampOf(t, p.Pad)
	for _, c := range changes {
		if err := c.do(); err != nil {
			t.Fatal(err)
		}
		now := stampOf(t, p.Pad)
		if now == last {
			t.Errorf("%s: stamp unchanged (%s)", c.name, now)
		}
		last = now
	}
	if _, err := p.Show(); err != nil {
		t.Fatal(err)
	}
	if stampOf(t, p.Pad) != last {
		t.Error("a read changed the stamp")
	}
}

// Items put in the lists by hand that are not ours are skipped and
// reported like torn ledger lines, and compaction removes them.
func TestRedisForeignItems(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{}), "run:foreign", Options{EntryTTL: time.Hour})
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "t"})
	p.Append("first", nil)
	ctx := context.Background()
	env.rdb.RPush(ctx, keyBase("run:foreign")+":ledger", "garbage")
	p.Append("second", nil)
	env.rdb.LPush(ctx, keyBase("run:foreign")+":history", "not a version")
	v, err := p.View(nil)
	if err != nil || len(v.Entries) != 2 || len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "1 unreadable ledger line") {
		t.Fatalf("view: %+v, %v", v, err)
	}
	if vs := mustHistory(t, p.Pad); len(vs) != 1 || vs[0].N != 1 {
		t.Fatalf("history: %+v", vs)
	}
	if n, err := p.Compact(); n != 1 || err != nil {
		t.Fatalf("compact: %d, %v", n, err)
	}
	if entries, bad := ledgerOf(t, p.Pad); len(entries) != 2 || bad != 0 {
		t.Fatalf("after compaction: %d entries, %d bad", len(entries), bad)
	}
}

// A tool call that cannot get the lock tells the model to retry: nothing
// changed.
func TestRedisBusyPadIsAToolResult(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{LockWait: 20 * time.Millisecond}), "run:tool", Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p.Pad, nil }, Options{})
	ctx, _ := h.session("s")
	lk, err := p.another(Options{}).store.lock()
	if err != nil {
		t.Fatal(err)
	}
	defer lk.unlock()
	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Next", "op": "replace", "content": "x"}}})
	if isErr || !strings.Contains(text, `"error":"pad_busy"`) || !strings.Contains(text, `"state_unchanged":true`) {
		t.Fatalf("update while locked: %v %s", isErr, text)
	}
}

// Redis paused during appends (issue 26): each append times out with an
// answer that says it may have been applied; once Redis resumes, the
// writes that reached it are applied, and the agent's retries of them are
// not added a second time: every note is in the ledger exactly once. An
// identical note of another agent is its own finding.
func TestRedisPausedAppendsAreNotDuplicated(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{Timeout: 300 * time.Millisecond}), "run:r1", Options{})
	// Connected, and the append script loaded, as in a running server.
	if _, err := p.AppendBy("worker-1", "started", nil); err != nil {
		t.Fatal(err)
	}
	env.srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			env.srv.Resume()
		}
	}()
	notes := []string{"pod a crashed", "pod b crashed", "pod c crashed"}
	for _, n := range notes {
		_, err := p.AppendBy("worker-1", n, []string{"k8s"})
		if !errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "may or may not have been added") {
			t.Fatalf("append with Redis paused: %v", err)
		}
	}
	env.srv.Resume()
	resumed = true
	// What was sent before the pause ran as soon as Redis went on; a new
	// connection's answer comes after it.
	if err := env.rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	landed, _ := env.rdb.LLen(context.Background(), keyBase("run:r1")+":ledger").Result()
	if landed < 2 {
		t.Fatalf("no timed-out append was applied (%d entries): the test shows nothing", landed)
	}
	deduped := 0
	for _, n := range notes {
		_, err := p.AppendBy("worker-1", n, []string{"k8s"})
		switch {
		case errors.Is(err, ErrAlreadyAppended):
			deduped++
		case err != nil:
			t.Fatalf("retry of %q: %v", n, err)
		}
	}
	if deduped != int(landed)-1 {
		t.Fatalf("%d retries deduplicated, %d lost writes landed", deduped, landed-1)
	}
	if _, err := p.AppendBy("worker-2", "pod a crashed", []string{"k8s"}); err != nil {
		t.Fatalf("another agent's identical note: %v", err)
	}
	entries, bad := ledgerOf(t, p.Pad)
	count := map[string]int{}
	for _, e := range entries {
		count[e.By+": "+e.Note]++
	}
	for _, n := range notes {
		if count["worker-1: "+n] != 1 {
			t.Fatalf("%q is in the ledger %d times: %v", n, count["worker-1: "+n], count)
		}
	}
	if bad != 0 || len(entries) != 5 || count["worker-2: pod a crashed"] != 1 {
		t.Fatalf("ledger: %d entries (%d bad): %v", len(entries), bad, count)
	}
}

// An update whose commit times out (Redis paused just before it) says
// its outcome is unknown; the commit lands when Redis resumes, within the
// lock's lease, and the agent's retry of the same call is not applied a
// second time: the appended plan item is there once. Another update is
// applied as usual.
func TestRedisPausedUpdateIsNotAppliedTwice(t *testing.T) {
	env := newRedisEnv(t)
	p := env.open(t, env.conn(t, RedisOptions{Timeout: 300 * time.Millisecond, LockLease: 2 * time.Second}), "run:r1", Options{})
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "ship"})
	patch := []Patch{{Section: "Plan", Op: OpAppend, Content: "tag the release"}}
	beforeRedisCommit = func() {
		beforeRedisCommit = nil
		env.srv.Pause()
	}
	t.Cleanup(func() { beforeRedisCommit = nil })
	_, err := p.ApplyOnce("worker-1", "call-1", patch, nil)
	env.srv.Resume()
	if !errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "read the pad before sending it again") {
		t.Fatalf("update with Redis paused: %v", err)
	}
	if !testwait.Until(testwait.Timeout, func() bool { return strings.Contains(p.doc(), "tag the release") }) {
		t.Fatalf("the timed-out commit never landed:\n%s", p.doc())
	}
	// The agent retries the same call: it waits for the lock (the lost
	// write's holder never released it) and is told it was applied.
	if _, err := p.ApplyOnce("worker-1", "call-1", patch, nil); !errors.Is(err, ErrAlreadyApplied) {
		t.Fatalf("retry: %v", err)
	}
	if n := strings.Count(p.doc(), "tag the release"); n != 1 {
		t.Fatalf("the item is in the plan %d times:\n%s", n, p.doc())
	}
	if _, err := p.ApplyOnce("worker-1", "call-2", []Patch{{Section: "Plan", Op: OpAppend, Content: "announce"}}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.doc(), "announce") {
		t.Fatalf("a new update was not applied:\n%s", p.doc())
	}
}
