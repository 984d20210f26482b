package state

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Size claims ([Leases.ClaimSize]): the bytes an owner keeps on the
// shared store are such a set, one member per stored output, lasting as
// long as the output does. [Redis] keeps a sorted set of the members
// scored by expiry (the server's clock) and a hash of their sizes with
// the running total, so a claim costs the members that expired since the
// last one, not a walk of all of them.

// ErrEmptyMember is returned by [Leases.ClaimSize] for member "": the
// name [Redis] keeps a set's running total under.
var ErrEmptyMember = errors.New("state: a size claim needs a member name")

func checkSizeClaim(member string, ttl time.Duration) error {
	if member == "" {
		return ErrEmptyMember
	}
	if ttl == 0 {
		return nil
	}
	return checkTTL(ttl)
}

// localSizes holds [Local]'s size claims: set → member → claim.
type localSizes struct {
	sizeMu sync.Mutex
	sizes  map[string]map[string]sizeClaim
}

type sizeClaim struct {
	size    int64
	expires time.Time // zero: none
}

// ClaimSize implements [Leases.ClaimSize].
func (l *Local) ClaimSize(_ context.Context, set, member string, size int64, ttl time.Duration, limit int64) (int64, bool, error) {
	if err := checkSizeClaim(member, ttl); err != nil {
		return 0, false, err
	}
	l.sizeMu.Lock()
	defer l.sizeMu.Unlock()
	if l.sizes == nil {
		l.sizes = map[string]map[string]sizeClaim{}
	}
	now := time.Now()
	m := l.sizes[set]
	var total int64
	for k, c := range m {
		if !c.expires.IsZero() && !c.expires.After(now) {
			delete(m, k)
			continue
		}
		total += c.size
	}
	after := total - m[member].size + size
	if after > limit {
		return total, false, nil
	}
	if m == nil {
		m = map[string]sizeClaim{}
		l.sizes[set] = m
	}
	c := sizeClaim{size: size}
	if ttl > 0 {
		c.expires = now.Add(ttl)
	}
	m[member] = c
	return after, true, nil
}

// ARGV: member, size, ttl ms (0: none), limit. KEYS: the sorted set of
// expiries, the hash of sizes, whose field "" holds the running total (no
// member is "": a stored output's name is never empty).
var sizeClaimScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local total = tonumber(redis.call('HGET', KEYS[2], '') or '0')
for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
  total = total - tonumber(redis.call('HGET', KEYS[2], m) or '0')
  redis.call('HDEL', KEYS[2], m)
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local old = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local after = total - old + tonumber(ARGV[2])
if after > tonumber(ARGV[4]) then
  redis.call('HSET', KEYS[2], '', total)
  return {total, 0}
end
local exp = '+inf'
if tonumber(ARGV[3]) > 0 then exp = now + tonumber(ARGV[3]) end
redis.call('ZADD', KEYS[1], exp, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2], '', after)
return {after, 1}`)

// ClaimSize implements [Leases.ClaimSize].
func (r *Redis) ClaimSize(ctx context.Context, set, member string, size int64, ttl time.Duration, limit int64) (int64, bool, error) {
	if err := checkSizeClaim(member, ttl); err != nil {
		return 0, false, err
	}
	if limit > math.MaxInt64/2 {
		limit = math.MaxInt64 / 2 // Lua numbers are doubles: keep within what they hold
	}
	keys := []string{r.key("size", set, "expiry"), r.key("size", set, "bytes")}
	res, err := sizeClaimScript.Run(ctx, r.client, keys, member, size, ttl.Milliseconds(), limit).Int64Slice()
	if err != nil {
		return 0, false, r.wrap("claim size "+set, err)
	}
	return res[0], res[1] == 1, nil
}
