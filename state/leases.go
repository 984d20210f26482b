package state

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Leases is the registry of live things (agents, runs, an owner's
// sessions) that every replica sees. A claim lasts ttl unless renewed, so
// the claims of a replica that dies vanish when they expire.
//
// [Redis] keeps a set as a sorted set scored by expiry, taken from the
// server's clock (replicas' clocks differ); [Local] keeps a map on
// time.Now. Both prune expired members on every call.
type Leases interface {
	// Lease claims member in set until ttl from now (renewing an earlier
	// claim). A ttl under 1ms is [ErrBadTTL].
	Lease(ctx context.Context, set, member string, ttl time.Duration) error
	// LeaseAll is [Leases.Lease] of each of members, in one round trip:
	// the renewal of everything a replica holds in set.
	LeaseAll(ctx context.Context, set string, members []string, ttl time.Duration) error
	// Release drops member's claim (no error if none).
	Release(ctx context.Context, set, member string) error
	// Held reports whether member's claim in set is live.
	Held(ctx context.Context, set, member string) (bool, error)
	// Live returns the members of set whose claims are live, sorted.
	Live(ctx context.Context, set string) ([]string, error)
	// Claim is [Leases.Lease] bounded: it claims member only if fewer
	// than limit live members are in set (or member already holds one);
	// ok is false when the set is full. It is atomic across replicas.
	Claim(ctx context.Context, set, member string, ttl time.Duration, limit int) (ok bool, err error)
	// ClaimSize is a claim bounded by size rather than count: member
	// holds size units in set until ttl from now (0: until claimed
	// again), admitted only if the live claims' sizes, member's own
	// earlier one left out, plus size stay within limit; total is the
	// set's sum after the claim, or now when refused (ok false). It is
	// atomic across replicas (sizes.go). Member "" is [ErrEmptyMember].
	ClaimSize(ctx context.Context, set, member string, size int64, ttl time.Duration, limit int64) (total int64, ok bool, err error)
}

func checkTTL(ttl time.Duration) error {
	if ttl < time.Millisecond {
		return fmt.Errorf("%w (got %s)", ErrBadTTL, ttl)
	}
	return nil
}

// localLeases holds [Local]'s sets: set → member → expiry. Its own mutex,
// so that leases never wait on another concern's work.
type localLeases struct {
	leaseMu sync.Mutex
	leases  map[string]map[string]time.Time
}

func (l *Local) initLeases() { l.leases = map[string]map[string]time.Time{} }

// pruneLocked drops set's expired members (and the set once empty) and
// returns what is left, nil for none. l.leaseMu is held.
func (l *Local) pruneLocked(set string, now time.Time) map[string]time.Time {
	m := l.leases[set]
	for member, exp := range m {
		if !exp.After(now) {
			delete(m, member)
		}
	}
	if len(m) == 0 {
		delete(l.leases, set)
		return nil
	}
	return m
}

// Lease implements [Leases.Lease].
func (l *Local) Lease(_ context.Context, set, member string, ttl time.Duration) error {
	_, err := l.claim(set, member, ttl, -1)
	return err
}

// LeaseAll implements [Leases.LeaseAll].
func (l *Local) LeaseAll(_ context.Context, set string, members []string, ttl time.Duration) error {
	for _, m := range members {
		if _, err := l.claim(set, m, ttl, -1); err != nil {
			return err
		}
	}
	return nil
}

// Release implements [Leases.Release].
func (l *Local) Release(_ context.Context, set, member string) error {
	l.leaseMu.Lock()
	defer l.leaseMu.Unlock()
	if m := l.pruneLocked(set, time.Now()); m != nil {
		delete(m, member)
		if len(m) == 0 {
			delete(l.leases, set)
		}
	}
	return nil
}

// Held implements [Leases.Held].
func (l *Local) Held(_ context.Context, set, member string) (bool, error) {
	l.leaseMu.Lock()
	defer l.leaseMu.Unlock()
	_, ok := l.pruneLocked(set, time.Now())[member]
	return ok, nil
}

// Live implements [Leases.Live].
func (l *Local) Live(_ context.Context, set string) ([]string, error) {
	l.leaseMu.Lock()
	defer l.leaseMu.Unlock()
	m := l.pruneLocked(set, time.Now())
	out := make([]string, 0, len(m))
	for member := range m {
		out = append(out, member)
	}
	slices.Sort(out)
	return out, nil
}

// Claim implements [Leases.Claim].
func (l *Local) Claim(_ context.Context, set, member string, ttl time.Duration, limit int) (bool, error) {
	return l.claim(set, member, ttl, max(limit, 0)) // a negative limit admits no one new, as 0
}

// claim is [Local.Claim] with a negative limit meaning no bound (for
// [Local.Lease]).
func (l *Local) claim(set, member string, ttl time.Duration, limit int) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	l.leaseMu.Lock()
	defer l.leaseMu.Unlock()
	now := time.Now()
	m := l.pruneLocked(set, now)
	if _, held := m[member]; !held && limit >= 0 && len(m) >= limit {
		return false, nil
	}
	if m == nil {
		m = map[string]time.Time{}
		l.leases[set] = m
	}
	m[member] = now.Add(ttl)
	return true, nil
}

// redisLeases holds [Redis]'s lease scripts.
type redisLeases struct {
	leaseClaim, leaseAll, leaseRelease, leaseHeld, leaseLive *redis.Script
}

// leasePrelude starts every lease script: now (ms) from the server's
// clock, expired members dropped. TIME before a write is allowed because
// Redis 5+ replicates a script's effects, not the script.
const leasePrelude = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
`

// leaseExpire pushes the key's own expiry to its farthest claim, so an
// idle set vanishes; an empty sorted set is already gone.
const leaseExpire = `
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if top[2] then redis.call('PEXPIRE', KEYS[1], tonumber(top[2]) - now) end
`

func (r *Redis) initLeases() {
	// ARGV: member, ttl ms, limit (negative: none).
	r.leaseClaim = redis.NewScript(leasePrelude + `
local limit = tonumber(ARGV[3])
if limit >= 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
` + leaseExpire + `
return 1`)
	// ARGV: ttl ms, members…
	r.leaseAll = redis.NewScript(leasePrelude + `
local exp = now + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], exp, ARGV[i]) end
` + leaseExpire + `
return 1`)
	r.leaseRelease = redis.NewScript(leasePrelude + `
redis.call('ZREM', KEYS[1], ARGV[1])
` + leaseExpire + `
return 1`)
	r.leaseHeld = redis.NewScript(leasePrelude + `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
return 0`)
	r.leaseLive = redis.NewScript(leasePrelude + `
return redis.call('ZRANGE', KEYS[1], 0, -1)`)
}

// leaseKey is set's sorted set.
func (r *Redis) leaseKey(set string) string { return r.key("lease", set) }

// Lease implements [Leases.Lease].
func (r *Redis) Lease(ctx context.Context, set, member string, ttl time.Duration) error {
	_, err := r.claim(ctx, "lease", set, member, ttl, -1)
	return err
}

// Claim implements [Leases.Claim].
func (r *Redis) Claim(ctx context.Context, set, member string, ttl time.Duration, limit int) (bool, error) {
	if limit < 0 {
		limit = 0 // "fewer than a negative limit" admits no one new, as 0
	}
	return r.claim(ctx, "claim", set, member, ttl, limit)
}

func (r *Redis) claim(ctx context.Context, op, set, member string, ttl time.Duration, limit int) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	n, err := r.leaseClaim.Run(ctx, r.client, []string{r.leaseKey(set)}, member, ttl.Milliseconds(), limit).Int()
	if err != nil {
		return false, r.wrap(op+" "+set, err)
	}
	return n == 1, nil
}

// LeaseAll implements [Leases.LeaseAll].
func (r *Redis) LeaseAll(ctx context.Context, set string, members []string, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	if len(members) == 0 {
		return nil
	}
	args := make([]any, 0, len(members)+1)
	args = append(args, ttl.Milliseconds())
	for _, m := range members {
		args = append(args, m)
	}
	return r.wrap("lease "+set, r.leaseAll.Run(ctx, r.client, []string{r.leaseKey(set)}, args...).Err())
}

// Release implements [Leases.Release].
func (r *Redis) Release(ctx context.Context, set, member string) error {
	return r.wrap("release "+set, r.leaseRelease.Run(ctx, r.client, []string{r.leaseKey(set)}, member).Err())
}

// Held implements [Leases.Held].
func (r *Redis) Held(ctx context.Context, set, member string) (bool, error) {
	n, err := r.leaseHeld.Run(ctx, r.client, []string{r.leaseKey(set)}, member).Int()
	if err != nil {
		return false, r.wrap("held "+set, err)
	}
	return n == 1, nil
}

// Live implements [Leases.Live].
func (r *Redis) Live(ctx context.Context, set string) ([]string, error) {
	out, err := r.leaseLive.Run(ctx, r.client, []string{r.leaseKey(set)}).StringSlice()
	if err != nil {
		return nil, r.wrap("live "+set, err)
	}
	slices.Sort(out) // the sorted set orders by expiry
	return out, nil
}
