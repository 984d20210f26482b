package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

func TestValues(t *testing.T) {
	ctx := context.Background()
	mustGet := func(t *testing.T, s Values, name string, want []byte) {
		t.Helper()
		got, err := s.GetValue(ctx, name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("GetValue(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	mustNone := func(t *testing.T, s Values, name string) {
		t.Helper()
		got, err := s.GetValue(ctx, name)
		if !errors.Is(err, ErrNoValue) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("GetValue(%q) = %q, %v; want ErrNoValue (and fs.ErrNotExist)", name, got, err)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, s Values, name string, c clock)
	}{
		{"put get replace delete", func(t *testing.T, s Values, name string, _ clock) {
			mustNone(t, s, name)
			for _, v := range [][]byte{[]byte("one"), []byte("two, longer"), {}} {
				if err := s.PutValue(ctx, name, v, 0); err != nil {
					t.Fatal(err)
				}
				mustGet(t, s, name, v)
			}
			if err := s.DeleteValue(ctx, name); err != nil {
				t.Fatal(err)
			}
			mustNone(t, s, name)
			if err := s.DeleteValue(ctx, name); err != nil {
				t.Fatalf("DeleteValue of none: %v", err)
			}
		}},
		{"caller's bytes are not kept", func(t *testing.T, s Values, name string, _ clock) {
			v := []byte("abc")
			if err := s.PutValue(ctx, name, v, 0); err != nil {
				t.Fatal(err)
			}
			v[0] = 'X'
			got, _ := s.GetValue(ctx, name)
			mustGet(t, s, name, []byte("abc"))
			got[1] = 'Y'
			mustGet(t, s, name, []byte("abc"))
		}},
		{"ttl expires", func(t *testing.T, s Values, name string, c clock) {
			if err := s.PutValue(ctx, name, []byte("v"), shortTTL); err != nil {
				t.Fatal(err)
			}
			mustGet(t, s, name, []byte("v"))
			c.expires(t, shortTTL, "the value expires", func() bool {
				_, err := s.GetValue(ctx, name)
				return errors.Is(err, ErrNoValue)
			})
			mustNone(t, s, name)
		}},
		{"put without ttl clears an earlier ttl", func(t *testing.T, s Values, name string, c clock) {
			if err := s.PutValue(ctx, name, []byte("v"), shortTTL); err != nil {
				t.Fatal(err)
			}
			if err := s.PutValue(ctx, name, []byte("w"), 0); err != nil {
				t.Fatal(err)
			}
			c.past(shortTTL)
			mustGet(t, s, name, []byte("w"))
		}},
		{"names are apart", func(t *testing.T, s Values, name string, _ clock) {
			if err := s.PutValue(ctx, name+"/a", []byte("a"), 0); err != nil {
				t.Fatal(err)
			}
			mustNone(t, s, name+"/b")
			mustGet(t, s, name+"/a", []byte("a"))
		}},
		{"bad ttl", func(t *testing.T, s Values, name string, _ clock) {
			for _, ttl := range []time.Duration{-time.Second, time.Microsecond} {
				if err := s.PutValue(ctx, name, []byte("v"), ttl); !errors.Is(err, ErrBadTTL) {
					t.Fatalf("PutValue ttl %s: %v, want ErrBadTTL", ttl, err)
				}
			}
			mustNone(t, s, name)
		}},
	}
	for _, st := range coordStores(t) {
		for _, c := range cases {
			t.Run(st.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				st.clock.run(t, func(t *testing.T) { c.run(t, st.open(), "values/"+c.name, st.clock) })
			})
		}
	}
}

// TestValuesShared: what one Redis store puts, another on the same server
// reads (two replicas).
func TestValuesShared(t *testing.T) {
	srv := testredis.Start(t)
	a := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	b := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	other := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "u"})
	ctx := context.Background()
	if err := a.PutValue(ctx, "tok", []byte("v1"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := b.GetValue(ctx, "tok"); err != nil || string(got) != "v1" {
		t.Fatalf("replica b reads %q, %v; want v1", got, err)
	}
	if _, err := other.GetValue(ctx, "tok"); !errors.Is(err, ErrNoValue) {
		t.Fatalf("another prefix reads %v; want ErrNoValue", err)
	}
}

func TestValuesRedisDown(t *testing.T) {
	srv := testredis.Start(t)
	r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	ctx := context.Background()
	if err := r.PutValue(ctx, "v", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	for what, err := range map[string]error{
		"put":    r.PutValue(ctx, "v", []byte("y"), 0),
		"get":    func() error { _, err := r.GetValue(ctx, "v"); return err }(),
		"delete": r.DeleteValue(ctx, "v"),
	} {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "[cluster] redis_url") || errors.Is(err, ErrNoValue) {
			t.Errorf("%s with Redis down: %v", what, err)
		}
	}
	srv.Restart() // an empty server: testredis keeps nothing on disk
	if err := r.PutValue(ctx, "v", []byte("z"), 0); err != nil {
		t.Fatalf("after Redis is back: %v", err)
	}
	if got, err := r.GetValue(ctx, "v"); err != nil || string(got) != "z" {
		t.Errorf("after Redis is back: %q, %v; want z", got, err)
	}
}

// TestCreateValueOnce: of replicas creating one value at once, every one
// gets the value the first made (Redis), and a second create in one
// process keeps the first (Local).
func TestCreateValueOnce(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	const n = 8
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := r.CreateValue(ctx, "key", []byte(fmt.Sprintf("made by %d", i)))
			if err != nil {
				t.Error(err)
			}
			got[i] = string(v)
		}()
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] || got[i] == "" {
			t.Fatalf("replicas got %q: not one value", got)
		}
	}
	l := NewLocal(LocalOptions{MemoryDir: t.TempDir()})
	for _, v := range []string{"first", "second"} {
		if got, err := l.CreateValue(ctx, "key", []byte(v)); err != nil || string(got) != "first" {
			t.Fatalf("local create %s: %q, %v", v, got, err)
		}
	}
}

// TestRedisPersistence: what a server keeps over its restart, as its
// configuration says.
func TestRedisPersistence(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		durable bool
		say     string
	}{
		{nil, false, "NOT persistent"},
		{[]string{"--appendonly", "yes"}, true, "persistent (appendonly yes)"},
		{[]string{"--save", "60 1"}, true, "snapshots only"},
	} {
		srv := testredis.Start(t, tc.args...)
		r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
		p, err := r.Persistence(context.Background())
		if err != nil || p.Durable() != tc.durable || !strings.Contains(p.String(), tc.say) {
			t.Errorf("%v: %+v %q, %v; want durable %v, %q", tc.args, p, p, err, tc.durable, tc.say)
		}
	}
	// CONFIG renamed away, as managed services do: unknown, not an error.
	srv := testredis.Start(t, "--rename-command", "CONFIG", "")
	r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	if p, err := r.Persistence(context.Background()); err != nil || p.Known || !p.Durable() || !strings.Contains(p.String(), "unknown") {
		t.Errorf("CONFIG refused: %+v, %v", p, err)
	}
}
