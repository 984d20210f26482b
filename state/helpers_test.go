package state

import (
	"testing"
	"time"
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
