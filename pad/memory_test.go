package pad

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory/memorytest"
)

// memoryBackends opens fresh pads' memory stores on each backend; one
// redis-server serves all of a test's Redis pads.
func memoryBackends(t *testing.T, fn func(t *testing.T, open func(t *testing.T, mo MemoryOptions) (*Pad, memory.Store))) {
	t.Run("file", func(t *testing.T) {
		fn(t, func(t *testing.T, mo MemoryOptions) (*Pad, memory.Store) {
			p, err := Open(filepath.Join(t.TempDir(), "pad"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			return p, p.Memory(mo)
		})
	})
	t.Run("redis", func(t *testing.T) {
		env := newRedisEnv(t)
		r := env.conn(t, RedisOptions{})
		fn(t, func(t *testing.T, mo MemoryOptions) (*Pad, memory.Store) {
			p, err := r.Open("agent:a"+strconv.FormatInt(env.seq.Add(1), 10), Options{})
			if err != nil {
				t.Fatal(err)
			}
			return p, p.Memory(mo)
		})
	})
}

// Both backends keep files, revisions and the lock as a memory.Store
// must (memorytest.TestStore).
func TestMemoryStore(t *testing.T) {
	memoryBackends(t, func(t *testing.T, open func(*testing.T, MemoryOptions) (*Pad, memory.Store)) {
		memorytest.TestStore(t, func(t *testing.T) memory.Store { _, st := open(t, MemoryOptions{}); return st })
	})
}

// The memory tool answers alike on both backends: package memory's
// golden scripts, run on the pad's stores.
func TestMemoryScripts(t *testing.T) {
	memoryBackends(t, func(t *testing.T, open func(*testing.T, MemoryOptions) (*Pad, memory.Store)) {
		memorytest.RunScripts(t, filepath.Join("..", "memory", "testdata"), func(t *testing.T) memory.Store { _, st := open(t, MemoryOptions{}); return st }, false)
	})
}

// memCall runs one memory tool call on st and returns its answer; a
// refusal fails the test unless refused is set.
func memCall(t *testing.T, st memory.Store, refused bool, args string) string {
	t.Helper()
	defs, err := memory.Tools(func(context.Context) (memory.Store, error) { return st, nil }, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := defs[0].Handler(context.Background(), json.RawMessage(args))
	if res.IsError != refused {
		t.Fatalf("%s: %s (isError %v)", args, res.Text, res.IsError)
	}
	return res.Text
}

// Each file keeps its last History versions; a deleted file keeps its
// own, for the Deleted most recently deleted files.
func TestMemoryVersionsKept(t *testing.T) {
	memoryBackends(t, func(t *testing.T, open func(*testing.T, MemoryOptions) (*Pad, memory.Store)) {
		p, st := open(t, MemoryOptions{History: 3, Deleted: 2})
		b := p.store.(memBackend)
		memCall(t, st, false, `{"command":"create","path":"/memories/a.md","file_text":"v1"}`)
		for i := 2; i <= 5; i++ {
			memCall(t, st, false, `{"command":"create","path":"/memories/a.md","file_text":"v`+strconv.Itoa(i)+`","expected_revision":`+strconv.Itoa(i-1)+`}`)
		}
		vs, deleted, err := b.memVersions("a.md", 0)
		if err != nil || deleted || len(vs) != 3 || vs[0].Rev != 5 || vs[2].Rev != 3 {
			t.Fatalf("versions %+v deleted %v (%v); want 5, 4, 3", vs, deleted, err)
		}
		for _, name := range []string{"b.md", "c.md", "d.md"} {
			memCall(t, st, false, `{"command":"create","path":"/memories/`+name+`","file_text":"x"}`)
		}
		for _, name := range []string{"b.md", "c.md", "a.md", "d.md"} {
			memCall(t, st, false, `{"command":"delete","path":"/memories/`+name+`"}`)
		}
		for name, kept := range map[string]bool{"b.md": false, "c.md": false, "a.md": true, "d.md": true} {
			vs, deleted, err := b.memVersions(name, 0)
			if err != nil || (len(vs) > 0) != kept || kept && !deleted {
				t.Errorf("%s: versions %d deleted %v (%v); want kept %v", name, len(vs), deleted, err, kept)
			}
		}
		// Created again, a.md continues its revisions.
		if got := memCall(t, st, false, `{"command":"create","path":"/memories/a.md","file_text":"back"}`); !strings.HasSuffix(got, "(revision 6)") {
			t.Errorf("recreated: %s", got)
		}
	})
}

// A file changed by hand is a revision of its own: read as one more than
// the newest version, saved as it before the next write replaces it, so
// history holds the hand edit and an old expected_revision fails.
func TestMemoryHandEdit(t *testing.T) {
	memoryBackends(t, func(t *testing.T, open func(*testing.T, MemoryOptions) (*Pad, memory.Store)) {
		p, st := open(t, MemoryOptions{})
		memCall(t, st, false, `{"command":"create","path":"/memories/n/a.md","file_text":"model\n"}`)
		handEdit(t, p, "n/a.md", "person\n")
		if got := memCall(t, st, false, `{"command":"view","path":"/memories/n/a.md"}`); !strings.Contains(got, "person") || !strings.HasSuffix(got, "(revision 2)") {
			t.Fatalf("after a hand edit: %s", got)
		}
		if got := memCall(t, st, true, `{"command":"str_replace","path":"/memories/n/a.md","old_str":"person","new_str":"x","expected_revision":1}`); !strings.Contains(got, "is at revision 2") {
			t.Fatalf("stale revision: %s", got)
		}
		memCall(t, st, false, `{"command":"str_replace","path":"/memories/n/a.md","old_str":"person","new_str":"both","expected_revision":2}`)
		vs, _, err := p.store.(memBackend).memVersions("n/a.md", 0)
		if err != nil || len(vs) != 3 {
			t.Fatalf("versions %+v, %v", vs, err)
		}
		for i, want := range []string{"both\n", "person\n", "model\n"} {
			if data, _ := vs[i].read(); string(data) != want || vs[i].Rev != int64(3-i) {
				t.Errorf("version %d: rev %d %q, want %d %q", i, vs[i].Rev, data, 3-i, want)
			}
		}
	})
}

// handEdit changes a memory file as a person would: the file in a
// shell, the hash field with redis-cli.
func handEdit(t *testing.T, p *Pad, path, text string) {
	t.Helper()
	switch s := p.store.(type) {
	case *fileStore:
		if err := os.WriteFile(filepath.Join(s.d.Path(), layout.PadMemoriesDir, filepath.FromSlash(path)), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	case *redisStore:
		if err := s.r.client.HSet(context.Background(), s.key(layout.RedisPadMemory), path, text).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A writer whose Redis lease ran out changes nothing: the batch is fenced
// by the lock's token.
func TestMemoryRedisFenced(t *testing.T) {
	env := newRedisEnv(t)
	p, err := env.conn(t, RedisOptions{}).Open("agent:fenced", Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Memory(MemoryOptions{})
	tx, err := st.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Unlock()
	if err := env.rdb.Del(context.Background(), keyBase("agent:fenced")+":lock").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Write("a.md", []byte("late"), time.Now()); !errors.Is(err, ErrLockLost) {
		t.Fatalf("write after the lease: %v, want ErrLockLost", err)
	}
	if files, err := st.Files(); err != nil || len(files) != 0 {
		t.Fatalf("files %v, %v: want none", files, err)
	}
}

// With [pad] redis_ttl every memory key expires with the pad, version
// lists included.
func TestMemoryRedisTTL(t *testing.T) {
	env := newRedisEnv(t)
	p, err := env.conn(t, RedisOptions{TTL: time.Hour}).Open("agent:ttl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Memory(MemoryOptions{})
	memCall(t, st, false, `{"command":"create","path":"/memories/a.md","file_text":"a"}`)
	memCall(t, st, false, `{"command":"create","path":"/memories/b.md","file_text":"b"}`)
	memCall(t, st, false, `{"command":"delete","path":"/memories/b.md"}`)
	memCall(t, st, false, `{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/c.md"}`)
	keys, err := env.rdb.Keys(context.Background(), keyBase("agent:ttl")+":memory*").Result()
	if err != nil || len(keys) < 5 {
		t.Fatalf("keys %v, %v", keys, err)
	}
	for _, k := range keys {
		if ttl := env.rdb.PTTL(context.Background(), k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s: TTL %v", k, ttl)
		}
	}
}
