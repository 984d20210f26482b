package state

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// ClaimSize bounds a set's sum across replicas: two clients of one Redis
// (or one Local) share it; a member's claim again replaces its size; an
// expired claim frees its size.
func TestClaimSize(t *testing.T) {
	ctx := context.Background()
	r, srv := newCoordRedis(t)
	twin := openTestRedis(t, srv.URL(), RedisOptions{})
	l := NewLocal(LocalOptions{})
	for _, st := range []struct {
		name string
		a, b Leases
	}{{"local", l, l}, {"redis", r, twin}} {
		t.Run(st.name, func(t *testing.T) {
			a, b := st.a, st.b
			claim := func(s Leases, member string, size int64, ttl time.Duration, wantTotal int64, wantOK bool) {
				t.Helper()
				total, ok, err := s.ClaimSize(ctx, "bytes", member, size, ttl, 1000)
				if err != nil || ok != wantOK || total != wantTotal {
					t.Fatalf("ClaimSize(%s, %d) = %d %v %v, want %d %v", member, size, total, ok, err, wantTotal, wantOK)
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
				t.Run(c.why, func(t *testing.T) { claim(c.s, c.member, c.size, c.ttl, c.total, c.ok) })
			}
			testwait.For(t, "the short claim expires", func() bool {
				_, ok, err := a.ClaimSize(ctx, "bytes", "y", 200, 0, 1000)
				return err == nil && ok
			})
			claim(b, "z", 0, 0, 500, true)
			if _, _, err := a.ClaimSize(ctx, "bytes", "x", 1, -time.Second, 1000); !errors.Is(err, ErrBadTTL) {
				t.Fatalf("negative ttl: %v", err)
			}
			if _, _, err := a.ClaimSize(ctx, "bytes", "", 1, 0, 1000); !errors.Is(err, ErrEmptyMember) {
				t.Fatalf("no member: %v", err)
			}
		})
	}
}
