package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// counterBackend opens two stores that share their counters: for Local
// the same store twice, for Redis two clients ("replicas") of one
// server. stop makes the shared server unreachable (nil for Local).
type counterBackend struct {
	name  string
	open  func(t *testing.T) (a, b Counters, stop func())
	clock clock // Local's TTLs are Go time: its cases run in a synctest bubble
}

func counterBackends() []counterBackend {
	return []counterBackend{
		{"local", func(t *testing.T) (Counters, Counters, func()) {
			l := NewLocal(LocalOptions{})
			return l, l, nil
		}, clock{fake: true}},
		{"redis", func(t *testing.T) (Counters, Counters, func()) {
			s := testredis.Start(t)
			return openRedis(t, s.URL()), openRedis(t, s.URL()), s.Kill
		}, clock{}},
	}
}

func openRedis(t testing.TB, url string) *Redis { return openTestRedis(t, url, RedisOptions{}) }

// pttl is how long key has left (-1 without expiry, -2 when absent), as
// each implementation keeps it.
func pttl(t *testing.T, c Counters, key string) time.Duration {
	t.Helper()
	switch s := c.(type) {
	case *Redis:
		d, err := s.client.PTTL(context.Background(), s.key("count", key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	case *Local:
		s.cmu.Lock()
		defer s.cmu.Unlock()
		if _, ok := s.counts[key]; !ok {
			return -2
		}
		at, ok := s.expires[key]
		if !ok {
			return -1
		}
		return time.Until(at)
	}
	t.Fatalf("pttl: unknown store %T", c)
	return 0
}

// hammer runs workers goroutines on each of a and b, each calling f
// rounds times, and returns how many calls reported true.
func hammer(t *testing.T, a, b Counters, workers, rounds int, f func(c Counters) (bool, error)) int64 {
	t.Helper()
	var wins atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for _, c := range []Counters{a, b} {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					ok, err := f(c)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						wins.Add(1)
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return wins.Load()
}

func TestCounters(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, a, b Counters, stop func(), c clock)
	}{
		{"try add never passes the limit under concurrency", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			// 2 stores × 8 goroutines × 200 = 3200 tries at a limit of 1000.
			wins := hammer(t, a, b, 8, 200, func(c Counters) (bool, error) {
				_, ok, err := c.TryAdd(ctx, "agent", "tokens", 1, 1000)
				return ok, err
			})
			if wins != 1000 {
				t.Errorf("%d TryAdd succeeded, want 1000", wins)
			}
			m, err := b.Counts(ctx, "agent")
			if err != nil {
				t.Fatal(err)
			}
			if m["tokens"] != 1000 {
				t.Errorf("final value %d, want 1000", m["tokens"])
			}
			v, ok, err := a.TryAdd(ctx, "agent", "tokens", 1, 1000)
			if err != nil || ok || v != 1000 {
				t.Errorf("TryAdd at the limit = %d, %v, %v; want 1000, false, nil", v, ok, err)
			}
		}},
		{"add never loses a charge under concurrency", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			hammer(t, a, b, 8, 100, func(c Counters) (bool, error) {
				_, err := c.Add(ctx, "agent", "calls", 3)
				return false, err
			})
			m, err := a.Counts(ctx, "agent")
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(2 * 8 * 100 * 3); m["calls"] != want {
				t.Errorf("calls = %d, want %d", m["calls"], want)
			}
		}},
		{"add with negative n", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			steps := []struct{ n, want int64 }{{10, 10}, {-3, 7}, {-7, 0}, {-5, -5}}
			for i, s := range steps {
				c := []Counters{a, b}[i%2]
				v, err := c.Add(ctx, "agent", "f", s.n)
				if err != nil || v != s.want {
					t.Fatalf("Add(%d) = %d, %v; want %d", s.n, v, err, s.want)
				}
			}
		}},
		{"add past the int64 range is an error and changes nothing", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			if _, err := a.Add(ctx, "agent", "f", math.MaxInt64-1); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Add(ctx, "agent", "f", 2); err == nil {
				t.Error("Add past MaxInt64 succeeded")
			}
			m, err := a.Counts(ctx, "agent")
			if err != nil || m["f"] != math.MaxInt64-1 {
				t.Errorf("after the refused Add Counts = %v, %v", m, err)
			}
		}},
		{"try add refuses past the limit and accepts a refund", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			steps := []struct {
				n, limit, want int64
				ok             bool
			}{{5, 10, 5, true}, {6, 10, 5, false}, {5, 10, 10, true}, {-4, 10, 6, true}, {4, 10, 10, true}, {1, 10, 10, false}}
			for i, s := range steps {
				c := []Counters{a, b}[i%2]
				v, ok, err := c.TryAdd(ctx, "agent", "f", s.n, s.limit)
				if err != nil || v != s.want || ok != s.ok {
					t.Fatalf("step %d TryAdd(%d, %d) = %d, %v, %v; want %d, %v", i, s.n, s.limit, v, ok, err, s.want, s.ok)
				}
			}
		}},
		{"counts", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			m, err := a.Counts(ctx, "nobody")
			if err != nil || m == nil || len(m) != 0 {
				t.Fatalf("Counts of a missing key = %v, %v; want an empty map", m, err)
			}
			for f, n := range map[string]int64{"in": 4, "out": 9, "calls": -2} {
				if _, err := a.Add(ctx, "agent", f, n); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := a.Add(ctx, "other", "in", 100); err != nil {
				t.Fatal(err)
			}
			m, err = b.Counts(ctx, "agent")
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(m) != fmt.Sprint(map[string]int64{"in": 4, "out": 9, "calls": -2}) {
				t.Errorf("Counts = %v", m)
			}
		}},
		{"touch sets the expiry, and an expired key is gone", func(t *testing.T, a, b Counters, _ func(), c clock) {
			if err := a.Touch(ctx, "nobody", time.Minute); err != nil {
				t.Fatal(err)
			}
			if d := pttl(t, a, "nobody"); d != -2 {
				t.Errorf("Touch created a missing key: pttl %v", d)
			}
			if _, err := a.Add(ctx, "agent", "f", 1); err != nil {
				t.Fatal(err)
			}
			if d := pttl(t, a, "agent"); d != -1 {
				t.Errorf("before Touch pttl = %v, want -1 (none)", d)
			}
			if err := b.Touch(ctx, "agent", time.Minute); err != nil {
				t.Fatal(err)
			}
			if d := pttl(t, a, "agent"); d <= 50*time.Second || d > time.Minute {
				t.Errorf("after Touch(1m) pttl = %v", d)
			}
			if err := a.Touch(ctx, "agent", 0); !errors.Is(err, ErrBadTTL) {
				t.Errorf("Touch(0) = %v, want ErrBadTTL", err)
			}
			if err := a.Touch(ctx, "agent", 30*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			c.expires(t, 30*time.Millisecond, "the touched key expires", func() bool {
				m, err := b.Counts(ctx, "agent")
				return err == nil && len(m) == 0
			})
		}},
		{"records keep their order and the newest max", func(t *testing.T, a, b Counters, _ func(), _ clock) {
			for i := range 10 {
				c := []Counters{a, b}[i%2]
				if err := c.AppendRecord(ctx, "usage", fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.AppendRecord(ctx, "other", []byte(`{"x":1}`)); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				max  int
				want string
			}{
				{0, `{"i":0} {"i":1} {"i":2} {"i":3} {"i":4} {"i":5} {"i":6} {"i":7} {"i":8} {"i":9}`},
				{3, `{"i":7} {"i":8} {"i":9}`},
				{1, `{"i":9}`},
				{50, `{"i":0} {"i":1} {"i":2} {"i":3} {"i":4} {"i":5} {"i":6} {"i":7} {"i":8} {"i":9}`},
			}
			for _, tt := range tests {
				rs, err := b.Records(ctx, "usage", tt.max)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, r := range rs {
					got = append(got, string(r))
				}
				if s := strings.Join(got, " "); s != tt.want {
					t.Errorf("Records(max %d) = %s, want %s", tt.max, s, tt.want)
				}
			}
			rs, err := a.Records(ctx, "none", 5)
			if err != nil || len(rs) != 0 {
				t.Errorf("Records of an empty log = %q, %v", rs, err)
			}
		}},
		{"once is true exactly once under concurrency", func(t *testing.T, a, b Counters, _ func(), c clock) {
			wins := hammer(t, a, b, 8, 20, func(c Counters) (bool, error) {
				return c.Once(ctx, "usage:agent", time.Minute)
			})
			if wins != 1 {
				t.Errorf("Once was true %d times, want 1", wins)
			}
			if ok, err := a.Once(ctx, "usage:other", time.Minute); err != nil || !ok {
				t.Errorf("Once of another key = %v, %v; want true", ok, err)
			}
			if _, err := a.Once(ctx, "usage:x", -time.Second); !errors.Is(err, ErrBadTTL) {
				t.Errorf("Once(-1s) = %v, want ErrBadTTL", err)
			}
			if ok, err := a.Once(ctx, "usage:short", 30*time.Millisecond); err != nil || !ok {
				t.Fatalf("Once = %v, %v", ok, err)
			}
			c.expires(t, 30*time.Millisecond, "the mark expires: Once is true again", func() bool {
				ok, err := b.Once(ctx, "usage:short", time.Minute)
				return err == nil && ok
			})
		}},
		{"an unreachable server is ErrUnavailable naming redis_url", func(t *testing.T, a, b Counters, stop func(), _ clock) {
			if stop == nil {
				t.Skip("a Local store has no server to lose")
			}
			if _, err := a.Add(ctx, "agent", "f", 1); err != nil {
				t.Fatal(err)
			}
			stop()
			calls := []struct {
				name string
				call func() error
			}{
				{"Add", func() error { _, err := a.Add(ctx, "agent", "f", 1); return err }},
				{"TryAdd", func() error { _, _, err := b.TryAdd(ctx, "agent", "f", 1, 10); return err }},
				{"Counts", func() error { _, err := a.Counts(ctx, "agent"); return err }},
				{"Touch", func() error { return b.Touch(ctx, "agent", time.Minute) }},
				{"AppendRecord", func() error { return a.AppendRecord(ctx, "usage", []byte(`{}`)) }},
				{"Records", func() error { _, err := b.Records(ctx, "usage", 0); return err }},
				{"Once", func() error { _, err := a.Once(ctx, "k", time.Minute); return err }},
			}
			for _, c := range calls {
				err := c.call()
				if !errors.Is(err, ErrUnavailable) || !strings.Contains(fmt.Sprint(err), "[cluster] redis_url") {
					t.Errorf("%s with Redis stopped = %v; want ErrUnavailable naming [cluster] redis_url", c.name, err)
				}
			}
		}},
	}
	for _, be := range counterBackends() {
		for _, tc := range cases {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				be.clock.run(t, func(t *testing.T) {
					a, b, stop := be.open(t)
					tc.run(t, a, b, stop, be.clock)
				})
			})
		}
	}
}

// Records past MaxRecords keep the newest: checked on Local only, since
// 100,000 round trips to Redis would make the suite slow; Redis applies
// the same bound with LTRIM -MaxRecords -1, checked here on a short list.
func TestRecordsBound(t *testing.T) {
	ctx := context.Background()
	l := NewLocal(LocalOptions{})
	for i := range MaxRecords + 5 {
		if err := l.AppendRecord(ctx, "usage", fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	rs, _ := l.Records(ctx, "usage", 0)
	if len(rs) != MaxRecords || string(rs[0]) != "5" || string(rs[len(rs)-1]) != fmt.Sprint(MaxRecords+4) {
		t.Errorf("local: %d records, first %s, last %s", len(rs), rs[0], rs[len(rs)-1])
	}

	s := testredis.Start(t)
	r := openRedis(t, s.URL())
	// Fill the list past the bound in one command, then append once: the
	// MULTI trims it back to MaxRecords, oldest dropped.
	k := r.key("records", "usage")
	vals := make([]any, MaxRecords+5)
	for i := range vals {
		vals[i] = fmt.Sprint(i)
	}
	if err := r.client.RPush(ctx, k, vals...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.AppendRecord(ctx, "usage", []byte("last")); err != nil {
		t.Fatal(err)
	}
	n, err := r.client.LLen(ctx, k).Result()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := r.client.LIndex(ctx, k, 0).Result()
	if n != MaxRecords || first != "6" {
		t.Errorf("redis: %d records, first %s; want %d, 6", n, first, MaxRecords)
	}
}
