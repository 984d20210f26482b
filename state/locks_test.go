package state

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockWithin takes name with a bounded wait; the bound is a safety net,
// not a timing assertion.
func lockWithin(t *testing.T, s Locks, name string, ttl time.Duration) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	unlock, err := s.Lock(ctx, name, ttl)
	if err != nil {
		t.Fatalf("Lock(%q): %v", name, err)
	}
	return unlock
}

// mustBeHeld checks that name cannot be taken: a short wait ends with the
// context's error.
func mustBeHeld(t *testing.T, s Locks, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	unlock, err := s.Lock(ctx, name, time.Minute)
	if err == nil {
		unlock()
		t.Fatalf("Lock(%q) succeeded while held", name)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock(%q) while held: %v, want context.DeadlineExceeded", name, err)
	}
}

func TestLocks(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, s Locks, name string)
	}{
		{"mutual exclusion", func(t *testing.T, s Locks, name string) {
			const workers, rounds = 8, 10
			// Atomics, not a plain int: Redis gives the race detector no
			// happens-before edge, so exclusion is checked by counting.
			var inside, most, done atomic.Int32
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for range rounds {
						// t.Fatal must stay on the test's goroutine: Error here.
						ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
						unlock, err := s.Lock(ctx, name, time.Minute)
						cancel()
						if err != nil {
							t.Error(err)
							return
						}
						n := inside.Add(1)
						for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
						}
						time.Sleep(time.Millisecond) // let another try while we hold it
						inside.Add(-1)
						done.Add(1)
						unlock()
					}
				})
			}
			wg.Wait()
			if most.Load() != 1 || done.Load() != workers*rounds {
				t.Fatalf("at most %d holders at once (want 1), %d rounds done (want %d)", most.Load(), done.Load(), workers*rounds)
			}
		}},
		{"timeout while held", func(t *testing.T, s Locks, name string) {
			unlock := lockWithin(t, s, name, time.Minute)
			mustBeHeld(t, s, name)
			unlock()
			lockWithin(t, s, name, time.Minute)()
		}},
		{"expired lock is taken over", func(t *testing.T, s Locks, name string) {
			stale := lockWithin(t, s, name, shortTTL)
			// Waits for the dead holder's ttl, then takes the lock.
			fresh := lockWithin(t, s, name, time.Minute)
			stale() // the old holder wakes up: must not free the new one's
			mustBeHeld(t, s, name)
			fresh()
			lockWithin(t, s, name, time.Minute)()
		}},
		{"names are apart", func(t *testing.T, s Locks, name string) {
			unlock := lockWithin(t, s, name+"/a", time.Minute)
			defer unlock()
			lockWithin(t, s, name+"/b", time.Minute)()
		}},
		{"unlock twice", func(t *testing.T, s Locks, name string) {
			first := lockWithin(t, s, name, time.Minute)
			first()
			second := lockWithin(t, s, name, time.Minute)
			first()
			mustBeHeld(t, s, name)
			second()
		}},
		{"ended context", func(t *testing.T, s Locks, name string) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := s.Lock(ctx, name, time.Minute); !errors.Is(err, context.Canceled) {
				t.Fatalf("Lock with a canceled context: %v, want context.Canceled", err)
			}
			lockWithin(t, s, name, time.Minute)() // nothing was left held
		}},
		{"bad ttl", func(t *testing.T, s Locks, name string) {
			if _, err := s.Lock(context.Background(), name, 0); !errors.Is(err, ErrBadTTL) {
				t.Fatalf("Lock ttl 0: %v, want ErrBadTTL", err)
			}
		}},
	}
	for _, st := range coordStores(t) {
		for _, c := range cases {
			t.Run(st.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				// Local: in a bubble, so a held lock's waits (ttl,
				// mustBeHeld's deadline) pass at once on the fake clock.
				st.clock.run(t, func(t *testing.T) { c.run(t, st.open(), c.name) }) // each case its own lock names
			})
		}
	}
}
