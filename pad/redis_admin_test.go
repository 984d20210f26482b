package pad

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Delete removes every key of one pad, quarantined documents and notes
// included, and nothing of another pad whose id starts the same.
func TestRedisDeleteLeavesNoKey(t *testing.T) {
	env := newRedisEnv(t)
	r := env.conn(t, RedisOptions{})
	ctx := context.Background()
	fill := func(id string) *testPad {
		p := env.open(t, r, id, Options{})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "t"})
		if _, err := p.Append("a note", nil); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := fill("owner:alice/run:r1")
	fill("owner:alice/run:r10")
	fill("run:r1")
	// A broken document is quarantined on read and leaves a notice.
	p.setDoc([]byte("stray text\n## Nope\n"))
	if _, err := p.Read(nil); err != nil {
		t.Fatal(err)
	}
	if len(p.broken()) == 0 {
		t.Fatal("no quarantined document to delete")
	}
	keys, err := r.Keys(ctx, "owner:alice/run:r1")
	if err != nil || len(keys) < 5 {
		t.Fatalf("Keys = %v, %v", keys, err)
	}
	gone, err := r.Delete(ctx, "owner:alice/run:r1")
	if err != nil || len(gone) != len(keys) {
		t.Fatalf("Delete = %v, %v (keys %v)", gone, err, keys)
	}
	all, err := env.rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range all {
		if strings.Contains(k, "{owner:alice/run:r1}") {
			t.Errorf("orphan key %s", k)
		}
	}
	for _, id := range []string{"owner:alice/run:r10", "run:r1"} {
		if ks, _ := r.Keys(ctx, id); len(ks) < 3 {
			t.Errorf("pad %s lost keys: %v", id, ks)
		}
	}
	// Glob characters in an id are literal.
	if ks, err := r.Keys(ctx, "owner:alice/run:r*"); err != nil || len(ks) != 0 {
		t.Errorf("Keys with a glob id = %v, %v", ks, err)
	}
}

// With a TTL every key of a pad expires that long after its last write;
// without one nothing expires.
func TestRedisTTLRefreshedOnWrite(t *testing.T) {
	env := newRedisEnv(t)
	ctx := context.Background()
	for _, ttl := range []time.Duration{0, time.Hour} {
		r := env.conn(t, RedisOptions{TTL: ttl})
		id := "agent:ttl" + ttl.String()
		p := env.open(t, r, id, Options{})
		mustUpdate(t, p.Pad, Patch{Section: "Task", Op: OpReplace, Content: "t"})
		// Keyed values and snapshots are the pad's keys too.
		if _, err := p.UpdateKeys("a", []KeyOp{{Op: "set", Key: "k", Value: []byte(`1`)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Snapshot("a", "s1"); err != nil {
			t.Fatal(err)
		}
		// Age the keys, then one append must refresh them all.
		keys, _ := r.Keys(ctx, id)
		for _, k := range keys {
			if ttl > 0 {
				env.rdb.PExpire(ctx, k, time.Minute)
			}
		}
		if _, err := p.Append("n", nil); err != nil {
			t.Fatal(err)
		}
		keys, _ = r.Keys(ctx, id)
		if len(keys) < 7 {
			t.Fatalf("keys %v", keys)
		}
		for _, k := range keys {
			got := env.rdb.PTTL(ctx, k).Val()
			if strings.Contains(k, ":dedupe:") {
				// A retry guard: its own short life, whatever the TTL.
				if got <= 0 || got > AppendDedupeWindow {
					t.Errorf("%s expires in %v, want within %v", k, got, AppendDedupeWindow)
				}
				continue
			}
			switch {
			case ttl == 0 && got != -1:
				t.Errorf("no TTL configured: %s expires in %v", k, got)
			case ttl > 0 && (got <= 59*time.Minute || got > ttl):
				t.Errorf("TTL %v: %s expires in %v", ttl, k, got)
			}
		}
	}
}
