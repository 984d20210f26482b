package state

import (
	"context"
	"errors"
	"testing"
	"time"
)

// ClaimSize bounds a set's sum across replicas: two clients of one Redis
// (or one Local) share it; a member's claim again replaces its size; an
// expired claim frees its size.
func TestClaimSize(t *testing.T) {
	ctx := context.Background()
	r, srv := newCoordRedis(t)
	twin := openTestRedis(t, srv.URL(), RedisOptions{})
	for _, st := range []struct {
		name  string
		open  func() (a, b Leases)
		clock clock
	}{
		{"local", func() (Leases, Leases) { l := NewLocal(LocalOptions{}); return l, l }, clock{fake: true}},
		{"redis", func() (Leases, Leases) { return r, twin }, clock{}},
	} {
		t.Run(st.name, func(t *testing.T) {
			st.clock.run(t, func(t *testing.T) {
				a, b := st.open()
				// No subtests: t.Run is not for a synctest bubble.
				claim := func(why string, s Leases, member string, size int64, ttl time.Duration, wantTotal int64, wantOK bool) {
					t.Helper()
					total, ok, err := s.ClaimSize(ctx, "bytes", member, size, ttl, 1000)
					if err != nil || ok != wantOK || total != wantTotal {
						t.Fatalf("%s: ClaimSize(%s, %d) = %d %v %v, want %d %v", why, member, size, total, ok, err, wantTotal, wantOK)
					}
				}
				for _, c := range []struct {
					s      Leases
					member string
					size   int64
					ttl    time.Duration
					total  int64
					ok     bool
					why    string
				}{
					{a, "x", 600, 0, 600, true, "first"},
					{b, "y", 500, 0, 600, false, "over the bound with the other replica's"},
					{b, "x", 900, 0, 900, true, "a member's claim again replaces its size"},
					{a, "x", 300, 0, 300, true, "and shrinks it"},
					{b, "short", 600, shortTTL, 900, true, "a claim that expires"},
					{a, "y", 200, 0, 900, false, "full while it lives"},
					{a, "huge", 1001, 0, 900, false, "over the bound alone"},
				} {
					claim(c.why, c.s, c.member, c.size, c.ttl, c.total, c.ok)
				}
				st.clock.expires(t, shortTTL, "the short claim expires", func() bool {
					_, ok, err := a.ClaimSize(ctx, "bytes", "y", 200, 0, 1000)
					return err == nil && ok
				})
				claim("a claim of 0 after the expiry", b, "z", 0, 0, 500, true)
				if _, _, err := a.ClaimSize(ctx, "bytes", "x", 1, -time.Second, 1000); !errors.Is(err, ErrBadTTL) {
					t.Fatalf("negative ttl: %v", err)
				}
				if _, _, err := a.ClaimSize(ctx, "bytes", "", 1, 0, 1000); !errors.Is(err, ErrEmptyMember) {
					t.Fatalf("no member: %v", err)
				}
			})
		})
	}
}
