package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// shortTTL is long enough that a claim is surely live right after it is
// made, short enough that waiting for its expiry is cheap.
const shortTTL = 300 * time.Millisecond

// coordStore is one implementation under test: open gives the store a
// case runs on, inside its clock's bubble.
type coordStore struct {
	name  string
	open  func() Store
	clock clock
}

// coordStores returns a [Local] (a fresh one per case, made in the case's
// synctest bubble) and a [Redis] on a fresh redis-server (shared, on the
// real clock), so that every case runs against both.
func coordStores(t *testing.T) []coordStore {
	t.Helper()
	r, _ := newCoordRedis(t)
	return []coordStore{
		{"local", func() Store { return NewLocal(LocalOptions{}) }, clock{fake: true}},
		{"redis", func() Store { return r }, clock{}},
	}
}

func newCoordRedis(t *testing.T) (*Redis, *testredis.Server) {
	t.Helper()
	srv := testredis.Start(t)
	return openTestRedis(t, srv.URL(), RedisOptions{}), srv
}

func mustLive(t *testing.T, s Leases, set string, want ...string) {
	t.Helper()
	got, err := s.Live(context.Background(), set)
	if err != nil {
		t.Fatal(err)
	}
	if want == nil {
		want = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Live(%q) = %q, want %q", set, got, want)
	}
}

func mustHeld(t *testing.T, s Leases, set, member string, want bool) {
	t.Helper()
	got, err := s.Held(context.Background(), set, member)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Held(%q, %q) = %v, want %v", set, member, got, want)
	}
}

func mustLease(t *testing.T, s Leases, set, member string, ttl time.Duration) {
	t.Helper()
	if err := s.Lease(context.Background(), set, member, ttl); err != nil {
		t.Fatal(err)
	}
}

func mustClaim(t *testing.T, s Leases, set, member string, ttl time.Duration, limit int, want bool) {
	t.Helper()
	ok, err := s.Claim(context.Background(), set, member, ttl, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ok != want {
		t.Fatalf("Claim(%q, %q, limit %d) = %v, want %v", set, member, limit, ok, want)
	}
}

func TestLeases(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		run  func(t *testing.T, s Leases, c clock)
	}{
		{"lease, held, release", func(t *testing.T, s Leases, _ clock) {
			mustHeld(t, s, "agents", "a", false)
			mustLease(t, s, "agents", "a", time.Minute)
			mustHeld(t, s, "agents", "a", true)
			mustLive(t, s, "agents", "a")
			if err := s.Release(ctx, "agents", "a"); err != nil {
				t.Fatal(err)
			}
			mustHeld(t, s, "agents", "a", false)
			mustLive(t, s, "agents")
			if err := s.Release(ctx, "agents", "never"); err != nil {
				t.Fatalf("Release of no claim: %v", err)
			}
		}},
		{"lease all renews each", func(t *testing.T, s Leases, c clock) {
			mustLease(t, s, "sessions", "a", shortTTL)
			if err := s.LeaseAll(ctx, "sessions", []string{"a", "b"}, time.Minute); err != nil {
				t.Fatal(err)
			}
			mustLease(t, s, "sessions", "probe", shortTTL)
			c.expires(t, shortTTL, "probe expires", func() bool {
				held, err := s.Held(ctx, "sessions", "probe")
				return err == nil && !held
			})
			mustLive(t, s, "sessions", "a", "b")
			if err := s.LeaseAll(ctx, "sessions", nil, time.Minute); err != nil {
				t.Fatalf("LeaseAll of none: %v", err)
			}
			if err := s.LeaseAll(ctx, "sessions", []string{"a"}, 0); !errors.Is(err, ErrBadTTL) {
				t.Fatalf("LeaseAll with ttl 0: %v", err)
			}
		}},
		{"live is sorted", func(t *testing.T, s Leases, _ clock) {
			// Expiries in the reverse order of the names.
			mustLease(t, s, "runs", "c", time.Minute)
			mustLease(t, s, "runs", "b", 2*time.Minute)
			mustLease(t, s, "runs", "a", 3*time.Minute)
			mustLive(t, s, "runs", "a", "b", "c")
		}},
		{"sets are apart", func(t *testing.T, s Leases, _ clock) {
			mustLease(t, s, "one", "a", time.Minute)
			mustHeld(t, s, "two", "a", false)
			mustLive(t, s, "two")
		}},
		{"claims expire", func(t *testing.T, s Leases, c clock) {
			mustLease(t, s, "agents", "short", shortTTL)
			mustLease(t, s, "agents", "long", time.Minute)
			c.expires(t, shortTTL, "short expires", func() bool {
				held, err := s.Held(ctx, "agents", "short")
				return err == nil && !held
			})
			mustLive(t, s, "agents", "long")
		}},
		{"lease renews", func(t *testing.T, s Leases, c clock) {
			mustLease(t, s, "agents", "renewed", shortTTL)
			mustLease(t, s, "agents", "renewed", time.Minute)
			mustLease(t, s, "agents", "probe", shortTTL)
			c.expires(t, shortTTL, "probe expires", func() bool {
				held, err := s.Held(ctx, "agents", "probe")
				return err == nil && !held
			})
			mustHeld(t, s, "agents", "renewed", true)
		}},
		{"claim honours its limit", func(t *testing.T, s Leases, _ clock) {
			mustClaim(t, s, "sessions", "a", time.Minute, 2, true)
			mustClaim(t, s, "sessions", "b", time.Minute, 2, true)
			mustClaim(t, s, "sessions", "c", time.Minute, 2, false)
			mustClaim(t, s, "sessions", "a", time.Minute, 2, true) // a renews its own
			if err := s.Release(ctx, "sessions", "a"); err != nil {
				t.Fatal(err)
			}
			mustClaim(t, s, "sessions", "c", time.Minute, 2, true)
			mustLive(t, s, "sessions", "b", "c")
			mustClaim(t, s, "empty", "a", time.Minute, 0, false)
			mustClaim(t, s, "empty", "a", time.Minute, -1, false)
		}},
		{"claim frees with expiry", func(t *testing.T, s Leases, c clock) {
			mustClaim(t, s, "sessions", "dead", shortTTL, 1, true)
			mustClaim(t, s, "sessions", "next", time.Minute, 1, false)
			c.expires(t, shortTTL, "dead's claim expires", func() bool {
				ok, err := s.Claim(ctx, "sessions", "next", time.Minute, 1)
				return err == nil && ok
			})
			mustLive(t, s, "sessions", "next")
		}},
		{"concurrent claimers", func(t *testing.T, s Leases, _ clock) {
			const claimers, limit = 16, 5
			var wg sync.WaitGroup
			oks := make([]bool, claimers)
			errs := make([]error, claimers)
			for i := range claimers {
				wg.Go(func() {
					oks[i], errs[i] = s.Claim(ctx, "sessions", fmt.Sprintf("m%02d", i), time.Minute, limit)
				})
			}
			wg.Wait()
			var won []string
			for i, ok := range oks {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				if ok {
					won = append(won, fmt.Sprintf("m%02d", i))
				}
			}
			if len(won) != limit {
				t.Fatalf("%d claims succeeded, want %d", len(won), limit)
			}
			mustLive(t, s, "sessions", won...)
		}},
		{"bad ttl", func(t *testing.T, s Leases, _ clock) {
			if err := s.Lease(ctx, "agents", "a", 0); !errors.Is(err, ErrBadTTL) {
				t.Fatalf("Lease ttl 0: %v, want ErrBadTTL", err)
			}
			if _, err := s.Claim(ctx, "agents", "a", time.Microsecond, 1); !errors.Is(err, ErrBadTTL) {
				t.Fatalf("Claim ttl 1µs: %v, want ErrBadTTL", err)
			}
			mustLive(t, s, "agents")
		}},
	}
	for _, st := range coordStores(t) {
		for _, c := range cases {
			t.Run(st.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				st.clock.run(t, func(t *testing.T) {
					// Each case its own sets: the Redis store is shared.
					c.run(t, prefixed{st.open(), c.name + "/"}, st.clock)
				})
			})
		}
	}
}

// prefixed puts every set of a case under its own name, so that cases
// sharing a store never see each other's claims.
type prefixed struct {
	Leases
	p string
}

func (p prefixed) Lease(ctx context.Context, set, member string, ttl time.Duration) error {
	return p.Leases.Lease(ctx, p.p+set, member, ttl)
}
func (p prefixed) LeaseAll(ctx context.Context, set string, members []string, ttl time.Duration) error {
	return p.Leases.LeaseAll(ctx, p.p+set, members, ttl)
}
func (p prefixed) Release(ctx context.Context, set, member string) error {
	return p.Leases.Release(ctx, p.p+set, member)
}
func (p prefixed) Held(ctx context.Context, set, member string) (bool, error) {
	return p.Leases.Held(ctx, p.p+set, member)
}
func (p prefixed) Live(ctx context.Context, set string) ([]string, error) {
	return p.Leases.Live(ctx, p.p+set)
}
func (p prefixed) Claim(ctx context.Context, set, member string, ttl time.Duration, limit int) (bool, error) {
	return p.Leases.Claim(ctx, p.p+set, member, ttl, limit)
}

// TestRedisLeaseKey checks the Redis layout: the lease key layout names, its
// score the server-clock expiry, its own expiry at the farthest claim, gone
// once every claim has expired; and the lock key, its ttl, gone on unlock.
func TestRedisLeaseKey(t *testing.T) {
	ctx := context.Background()
	r, srv := newCoordRedis(t)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = raw.Close() })
	key := layout.ClusterKey(layout.DefaultClusterPrefix, "lease", "agents")

	mustLease(t, r, "agents", "a", shortTTL)
	mustLease(t, r, "agents", "b", time.Minute)
	if n, err := raw.ZCard(ctx, key).Result(); err != nil || n != 2 {
		t.Fatalf("ZCARD %s = %d, %v; want 2", key, n, err)
	}
	pttl, err := raw.PTTL(ctx, key).Result()
	if err != nil || pttl <= 30*time.Second || pttl > time.Minute {
		t.Fatalf("PTTL %s = %s, %v; want the farthest claim's (about 1m)", key, pttl, err)
	}
	// The score is an expiry on the server's clock, in ms.
	now, err := raw.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	score, err := raw.ZScore(ctx, key, "b").Result()
	if exp := time.UnixMilli(int64(score)); err != nil || exp.Before(now) || exp.After(now.Add(time.Minute)) {
		t.Fatalf("ZSCORE %s b = %v, %v; want an expiry within %s of the server's %s", key, exp, err, time.Minute, now)
	}

	if err := r.Release(ctx, "agents", "b"); err != nil {
		t.Fatal(err)
	}
	// a's expiry, or gone already if a slow machine let a expire (-2).
	if pttl, err := raw.PTTL(ctx, key).Result(); err != nil || pttl > shortTTL || pttl <= 0 && pttl != -2 {
		t.Fatalf("PTTL %s after releasing b = %s, %v; want a's (at most %s)", key, pttl, err, shortTTL)
	}
	lockKey := layout.ClusterKey(layout.DefaultClusterPrefix, "lock", "refresh")
	unlock := lockWithin(t, r, "refresh", time.Minute)
	if pttl, err := raw.PTTL(ctx, lockKey).Result(); err != nil || pttl <= 30*time.Second || pttl > time.Minute {
		t.Fatalf("PTTL %s = %s, %v; want the lock's ttl (about 1m)", lockKey, pttl, err)
	}
	unlock()
	if n, err := raw.Exists(ctx, lockKey).Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS %s after unlock = %d, %v; want 0", lockKey, n, err)
	}

	testwait.For(t, "the idle set's key vanishes", func() bool {
		n, err := raw.Exists(ctx, key).Result()
		return err == nil && n == 0
	})
}

// TestCoordUnavailable stops Redis: every call fails with an error that
// wraps ErrUnavailable and names the config key.
func TestCoordUnavailable(t *testing.T) {
	r, srv := newCoordRedis(t)
	srv.Kill()
	ctx := context.Background()
	calls := []struct {
		name string
		call func() error
	}{
		{"Lease", func() error { return r.Lease(ctx, "s", "m", time.Minute) }},
		{"Release", func() error { return r.Release(ctx, "s", "m") }},
		{"Held", func() error { _, err := r.Held(ctx, "s", "m"); return err }},
		{"Live", func() error { _, err := r.Live(ctx, "s"); return err }},
		{"Claim", func() error { _, err := r.Claim(ctx, "s", "m", time.Minute, 1); return err }},
		{"Lock", func() error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			unlock, err := r.Lock(ctx, "refresh", time.Minute)
			if err == nil {
				unlock()
			}
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if !errors.Is(err, ErrUnavailable) || !strings.Contains(fmt.Sprint(err), "[cluster] redis_url") {
				t.Fatalf("%s with Redis down: %v; want ErrUnavailable naming [cluster] redis_url", c.name, err)
			}
		})
	}
}

// TestRedisReplicas runs claimers and lockers on two Redis stores of one
// server, as two replicas would be: Claim's limit and a lock hold across
// them, and each sees the other's claims.
func TestRedisReplicas(t *testing.T) {
	ctx := context.Background()
	a, srv := newCoordRedis(t)
	b, err := NewRedis(RedisOptions{URL: srv.URL(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	replicas := []*Redis{a, b}

	const claimers, limit = 20, 7
	var wg sync.WaitGroup
	var won atomic.Int32
	for i := range claimers {
		wg.Go(func() {
			ok, err := replicas[i%2].Claim(ctx, "sessions", fmt.Sprintf("m%02d", i), time.Minute, limit)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != limit {
		t.Fatalf("%d claims succeeded across two replicas, want %d", won.Load(), limit)
	}
	for _, r := range replicas {
		if live, err := r.Live(ctx, "sessions"); err != nil || len(live) != limit {
			t.Fatalf("Live = %q, %v; want %d members", live, err, limit)
		}
	}

	unlock := lockWithin(t, a, "refresh", time.Minute)
	mustBeHeld(t, b, "refresh")
	unlock()
	lockWithin(t, b, "refresh", time.Minute)()
}
