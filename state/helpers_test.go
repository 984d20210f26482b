package state

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// openTestRedis opens a store on the Redis at url (a testredis server),
// closed when tb ends. A zero Timeout is 2s: a killed server's commands
// fail fast.
func openTestRedis(tb testing.TB, url string, o RedisOptions) *Redis {
	tb.Helper()
	o.URL = url
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	r, err := NewRedis(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	return r
}

// clock is the time a case's TTLs run on. A Local store's expiries are Go
// time: its cases run in a testing/synctest bubble (fake), where
// time.Sleep advances the clock at once and exactly, so an expiry is
// checked to the millisecond and costs no wall time. A Redis store's
// expiries are the server's, which no bubble reaches: its cases run on
// the real clock and wait by polling.
type clock struct{ fake bool }

// run runs f in a bubble on the fake clock, or as it is on the real one.
func (c clock) run(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if c.fake {
		synctest.Test(t, f)
		return
	}
	f(t)
}

// expires waits for gone to hold once ttl has passed since what was set.
// On the fake clock it also checks the edge: not gone a millisecond
// before ttl, gone a millisecond after. gone must not change what it
// looks at while it does not hold.
func (c clock) expires(t *testing.T, ttl time.Duration, what string, gone func() bool) {
	t.Helper()
	if !c.fake {
		testwait.For(t, what, gone)
		return
	}
	time.Sleep(ttl - time.Millisecond)
	if gone() {
		t.Fatalf("%s: already a millisecond before its ttl of %s", what, ttl)
	}
	time.Sleep(2 * time.Millisecond)
	if !gone() {
		t.Fatalf("%s: not a millisecond after its ttl of %s", what, ttl)
	}
}

// past lets ttl pass, for a case that shows something outlives it:
// exactly on the fake clock, with a margin for the server on the real one.
func (c clock) past(ttl time.Duration) {
	if c.fake {
		time.Sleep(ttl + time.Millisecond)
		return
	}
	time.Sleep(ttl + 100*time.Millisecond)
}
