package state

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// sessionStores returns two stores that share their state, as two
// replicas do: the same Local twice, or two Redis clients of one server.
func sessionStores(t *testing.T) map[string][2]Sessions {
	t.Helper()
	l := NewLocal(LocalOptions{})
	srv := testredis.Start(t)
	open := func() *Redis { return openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"}) }
	return map[string][2]Sessions{"local": {l, l}, "redis": {open(), open()}}
}

func TestSessionRecords(t *testing.T) {
	ctx := context.Background()
	for name, st := range sessionStores(t) {
		// Local's ttls are Go time: its case runs in a synctest bubble,
		// on a Local of its own made there.
		clk := clock{fake: name == "local"}
		t.Run(name, func(t *testing.T) {
			clk.run(t, func(t *testing.T) {
				a, b := st[0], st[1]
				if clk.fake {
					l := NewLocal(LocalOptions{})
					a, b = l, l
				}
				if _, err := b.GetSession(ctx, "s1"); !errors.Is(err, ErrNoSession) {
					t.Fatalf("unknown session: %v", err)
				}
				if err := a.PutSession(ctx, "s1", []byte(`{"v":"2025-11-25"}`), time.Minute); err != nil {
					t.Fatal(err)
				}
				rec, err := b.GetSession(ctx, "s1")
				if err != nil || string(rec) != `{"v":"2025-11-25"}` {
					t.Fatalf("other replica reads %q, %v", rec, err)
				}
				if err := b.RenewSession(ctx, "s1", time.Hour); err != nil {
					t.Fatal(err)
				}
				if err := b.DeleteSession(ctx, "s1"); err != nil {
					t.Fatal(err)
				}
				if err := a.RenewSession(ctx, "s1", time.Hour); err != nil {
					t.Fatal(err)
				}
				if _, err := a.GetSession(ctx, "s1"); !errors.Is(err, ErrNoSession) {
					t.Errorf("deleted session: %v", err)
				}
				if err := a.PutSession(ctx, "short", []byte("x"), 50*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				clk.expires(t, 50*time.Millisecond, "a session past its ttl to go", func() bool {
					_, err := b.GetSession(ctx, "short")
					return errors.Is(err, ErrNoSession)
				})
			})
		})
	}
}

func TestSessionChannels(t *testing.T) {
	for name, st := range sessionStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, b := st[0], st[1]
			sub, err := b.Subscribe(ctx, "sess-1")
			if err != nil {
				t.Fatal(err)
			}
			other, err := b.Subscribe(ctx, "sess-2")
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			for i := range 10 {
				if n, err := a.Publish(ctx, "sess-1", fmt.Appendf(nil, "m%d", i)); err != nil || n != 1 {
					t.Fatalf("publish %d: %d receivers, %v", i, n, err)
				}
			}
			for i := range 10 {
				select {
				case m := <-sub.C():
					if string(m) != fmt.Sprintf("m%d", i) {
						t.Fatalf("message %d = %q: out of order", i, m)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("message %d never arrived", i)
				}
			}
			select {
			case m := <-other.C():
				t.Errorf("another channel's subscriber got %q", m)
			default:
			}
			sub.Close()
			for range sub.C() { // closed after Close
			}
			// Nobody listens any more: published to no one.
			testwait.For(t, "no receivers after Close", func() bool {
				n, err := a.Publish(ctx, "sess-1", []byte("late"))
				return err == nil && n == 0
			})
		})
	}
}

// A subscriber that does not read loses messages (counted); the
// publisher is never held up.
func TestSubscriptionBounded(t *testing.T) {
	for name, st := range sessionStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, b := st[0], st[1]
			sub, err := b.Subscribe(ctx, "slow")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			const n = 3 * SubscriptionQueue
			for i := range n {
				if _, err := a.Publish(ctx, "slow", fmt.Appendf(nil, "%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			// Redis delivers asynchronously: wait until every message is
			// either queued or counted as dropped.
			testwait.For(t, "every message queued or dropped", func() bool {
				return len(sub.C())+int(sub.Dropped()) >= n-SubscriptionQueue
			})
			if got := len(sub.C()); got > SubscriptionQueue {
				t.Errorf("queue holds %d, bound %d", got, SubscriptionQueue)
			}
			if sub.Dropped() == 0 {
				t.Errorf("%d messages to a subscriber that reads none: none dropped", n)
			}
		})
	}
}

func TestSessionsRedisDown(t *testing.T) {
	srv := testredis.Start(t)
	r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	ctx := context.Background()
	if err := r.PutSession(ctx, "s", []byte("x"), time.Minute); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	for what, err := range map[string]error{
		"put": r.PutSession(ctx, "s", []byte("y"), time.Minute),
		"get": func() error { _, err := r.GetSession(ctx, "s"); return err }(),
		"pub": func() error { _, err := r.Publish(ctx, "c", []byte("m")); return err }(),
		"sub": func() error { _, err := r.Subscribe(ctx, "c"); return err }(),
	} {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "[cluster] redis_url") {
			t.Errorf("%s with Redis down: %v", what, err)
		}
	}
	srv.Restart()
	if err := r.PutSession(ctx, "s", []byte("z"), time.Minute); err != nil {
		t.Errorf("after Redis is back: %v", err)
	}
}

// Every subscription of a Redis store shares one connection: many
// channels, one pub/sub client on the server; each channel still gets
// only its own messages, a channel left is unsubscribed on the server,
// and one subscriber leaving keeps the channel for the other.
func TestSubscriptionsShareOneConnection(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	pub := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	r := openTestRedis(t, srv.URL(), RedisOptions{Prefix: "t"})
	const n = 40
	subs := make([]*Subscription, n)
	for i := range subs {
		var err error
		if subs[i], err = r.Subscribe(ctx, fmt.Sprintf("c%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	twin, err := r.Subscribe(ctx, "c0")
	if err != nil {
		t.Fatal(err)
	}
	list, err := pub.client.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(list, "flags=P") != 1 { // P: a pub/sub subscriber
		t.Fatalf("pub/sub connections for %d subscriptions:\n%s", n+1, list)
	}
	for i := range subs {
		if got, err := pub.Publish(ctx, fmt.Sprintf("c%d", i), fmt.Appendf(nil, "m%d", i)); err != nil || got != 1 {
			t.Fatalf("publish c%d: %d receivers, %v", i, got, err)
		}
	}
	for i, s := range subs {
		select {
		case m := <-s.C():
			if string(m) != fmt.Sprintf("m%d", i) {
				t.Fatalf("c%d got %q", i, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("c%d: nothing", i)
		}
	}
	if m := <-twin.C(); string(m) != "m0" {
		t.Fatalf("second subscriber of c0 got %q", m)
	}
	subs[0].Close()
	if got, err := pub.Publish(ctx, "c0", []byte("again")); err != nil || got != 1 {
		t.Fatalf("c0 with one subscriber left: %d receivers, %v", got, err)
	}
	if m := <-twin.C(); string(m) != "again" {
		t.Fatalf("the subscriber left on c0 got %q", m)
	}
	twin.Close()
	testwait.For(t, "c0 unsubscribed on the server", func() bool {
		got, err := pub.Publish(ctx, "c0", []byte("late"))
		return err == nil && got == 0
	})
}
