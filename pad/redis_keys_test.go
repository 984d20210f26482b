package pad

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// TestRedisKeysInLayout drives every kind of write a pad makes on a real
// redis-server, with a TTL, and then reads back every key under the
// pad's base: each must be a part of [layout.RedisPadParts] (a key named
// in package pad and not in the table fails here), it must expire as its
// row says (a key the TTL list misses stays forever after the pad is
// gone), and every part of the table that is ever written must be seen,
// so that the table lists no dead key.
func TestRedisKeysInLayout(t *testing.T) {
	env := newRedisEnv(t)
	const ttl = time.Hour
	r := env.conn(t, RedisOptions{TTL: ttl})
	ctx := context.Background()
	id := "owner:alice/run:keys"
	p := env.open(t, r, id, Options{})
	base := layout.RedisBase(DefaultRedisPrefix, id)

	// doc, history, version, lock (released), and a write's retry guard.
	mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "t"})
	if _, err := p.ApplyOnce("a", "retry-1", []Patch{{Section: "Task", Op: OpReplace, Content: "u"}}, nil); err != nil {
		t.Fatal(err)
	}
	// ledger and an append's guard (an author's append is deduplicated).
	if _, err := p.AppendBy("a", "a note", nil); err != nil {
		t.Fatal(err)
	}
	// keys, keys:history, snapshots.
	for _, v := range []string{`1`, `2`} {
		if _, err := p.UpdateKeys("a", []KeyOp{{Op: OpSet, Key: "k", Value: json.RawMessage(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Snapshot("a", "s1"); err != nil {
		t.Fatal(err)
	}
	// A broken document is quarantined on read (broken:…) and leaves a
	// notice; broken keyed values are moved aside by the next write
	// (keys:broken:…).
	p.setDoc([]byte("stray text\n## Nope\n"))
	if _, err := p.Read(nil); err != nil {
		t.Fatal(err)
	}
	if err := env.rdb.Set(ctx, layout.RedisKey(base, layout.RedisPadKeys), "{not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdateKeys("a", []KeyOp{{Op: OpSet, Key: "k", Value: json.RawMessage(`3`)}}); err != nil {
		t.Fatal(err)
	}
	// The notice is consumed by the next read: leave one to be seen.
	if err := p.store.addNotice(nil, "left for the test"); err != nil {
		t.Fatal(err)
	}

	// memory, memory:atime, memory:history:{path}, memory:deleted.
	st := p.Memory(MemoryOptions{})
	memCall(t, st, false, `{"command":"create","path":"/memories/a.md","file_text":"a"}`)
	memCall(t, st, false, `{"command":"create","path":"/memories/b.md","file_text":"b"}`)
	memCall(t, st, false, `{"command":"delete","path":"/memories/b.md"}`)

	keys, err := r.Keys(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, k := range keys {
		part, ok := layout.ParseRedisPadKey(base, k)
		if !ok {
			t.Errorf("key %s is not in layout.RedisPadParts", k)
			continue
		}
		seen[part.Name] = true
		got := env.rdb.PTTL(ctx, k).Val()
		switch part.Expiry {
		case layout.ExpiresWithPad:
			if got <= ttl-time.Minute || got > ttl {
				t.Errorf("%s expires in %v, want the pad's TTL %v", k, got, ttl)
			}
		case layout.ExpiresOwn:
			if got <= 0 || got > AppendDedupeWindow {
				t.Errorf("%s expires in %v, want a life of its own within %v", k, got, AppendDedupeWindow)
			}
		}
	}
	for _, part := range layout.RedisPadParts {
		// The lock is released and the no-guard key never written.
		if part.Name == layout.RedisPadLock.String() || part.Name == layout.RedisPadNoGuard.String() {
			continue
		}
		if !seen[part.Name] {
			t.Errorf("no key of part %q was written (keys %v)", part.Name, keys)
		}
	}
}
