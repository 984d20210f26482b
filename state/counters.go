package state

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// MaxRecords bounds each record log of [Counters.AppendRecord]: once a
// log holds this many records, appending one drops the oldest. It keeps
// a log of a long-lived deployment from growing without end; usage.jsonl
// on disk remains the complete history.
const MaxRecords = 100_000

// ErrOverflow is returned by a [Local] whose counter would pass the int64
// range; Redis refuses the same HINCRBY with an error of its own.
var ErrOverflow = errors.New("state: counter would overflow int64")

// addInt64 is x+y, or false when it would wrap.
func addInt64(x, y int64) (int64, bool) {
	s := x + y
	if (y > 0 && s < x) || (y < 0 && s > x) {
		return 0, false
	}
	return s, true
}

// Counters is one concern of a [Store]: the budgets of agents (a hash of
// named int64 counters per key), their usage records, and once-only
// marks. Every change is atomic across replicas sharing a [Redis]: two
// replicas charging one agent at once never lose a charge, and
// [Counters.TryAdd] never lets a counter pass its limit.
type Counters interface {
	// Add adds n (may be negative) to field of the counter hash key,
	// atomically, and returns the new value.
	Add(ctx context.Context, key, field string, n int64) (int64, error)
	// TryAdd adds n to field only if the result stays <= limit. It
	// returns the value after the add and true, or the current value and
	// false.
	TryAdd(ctx context.Context, key, field string, n, limit int64) (int64, bool, error)
	// Counts returns every field of key (an empty map if none).
	Counts(ctx context.Context, key string) (map[string]int64, error)
	// Touch sets key's expiry to ttl from now, so that the budgets of
	// idle agents go away. A key that does not exist stays absent.
	Touch(ctx context.Context, key string, ttl time.Duration) error
	// AppendRecord appends one record (a JSON object, no newline) to the
	// named log, which keeps the newest [MaxRecords].
	AppendRecord(ctx context.Context, log string, rec []byte) error
	// Records returns the records of log oldest first: the newest max of
	// them, or all when max <= 0.
	Records(ctx context.Context, log string, max int) ([][]byte, error)
	// Once reports true exactly once per key across all replicas within
	// ttl, e.g. for "write this agent's usage record once".
	Once(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// localCounters keeps the counters of a [Local] in memory. Its own mutex
// so that charges never wait on another concern.
type localCounters struct {
	cmu     sync.Mutex
	counts  map[string]map[string]int64
	expires map[string]time.Time // counter keys with a Touch
	records map[string][][]byte
	once    map[string]time.Time // key → when the mark expires
}

func (l *Local) initCounters() {
	l.counts = map[string]map[string]int64{}
	l.expires = map[string]time.Time{}
	l.records = map[string][][]byte{}
	l.once = map[string]time.Time{}
}

// hash returns key's fields, dropping them first when their Touch has
// expired, as Redis would. Callers hold cmu.
func (c *localCounters) hash(key string, create bool) map[string]int64 {
	if at, ok := c.expires[key]; ok && !time.Now().Before(at) {
		delete(c.counts, key)
		delete(c.expires, key)
	}
	h := c.counts[key]
	if h == nil && create {
		h = map[string]int64{}
		c.counts[key] = h
	}
	return h
}

// Add implements [Counters.Add].
func (c *localCounters) Add(_ context.Context, key, field string, n int64) (int64, error) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	h := c.hash(key, true)
	v, ok := addInt64(h[field], n)
	if !ok {
		return h[field], fmt.Errorf("add %d to %q %q: %w", n, key, field, ErrOverflow)
	}
	h[field] = v
	return v, nil
}

// TryAdd implements [Counters.TryAdd].
func (c *localCounters) TryAdd(_ context.Context, key, field string, n, limit int64) (int64, bool, error) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	h := c.hash(key, false)
	v := h[field]
	sum, ok := addInt64(v, n)
	if !ok {
		return v, false, fmt.Errorf("add %d to %q %q: %w", n, key, field, ErrOverflow)
	}
	if sum > limit {
		return v, false, nil
	}
	c.hash(key, true)[field] = sum
	return sum, true, nil
}

// Counts implements [Counters.Counts].
func (c *localCounters) Counts(_ context.Context, key string) (map[string]int64, error) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	out := map[string]int64{}
	for f, v := range c.hash(key, false) {
		out[f] = v
	}
	return out, nil
}

// Touch implements [Counters.Touch].
func (c *localCounters) Touch(_ context.Context, key string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("touch %q: %w", key, ErrBadTTL)
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	if c.hash(key, false) != nil {
		c.expires[key] = time.Now().Add(ttl)
	}
	return nil
}

// AppendRecord implements [Counters.AppendRecord].
func (c *localCounters) AppendRecord(_ context.Context, log string, rec []byte) error {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	rs := append(c.records[log], append([]byte(nil), rec...))
	if len(rs) > MaxRecords {
		// Copy down rather than reslice, so the dropped records are freed.
		rs = append(rs[:0:0], rs[len(rs)-MaxRecords:]...)
	}
	c.records[log] = rs
	return nil
}

// Records implements [Counters.Records].
func (c *localCounters) Records(_ context.Context, log string, max int) ([][]byte, error) {
	c.cmu.Lock()
	defer c.cmu.Unlock()
	rs := c.records[log]
	if max > 0 && len(rs) > max {
		rs = rs[len(rs)-max:]
	}
	out := make([][]byte, len(rs))
	for i, r := range rs {
		out[i] = append([]byte(nil), r...)
	}
	return out, nil
}

// Once implements [Counters.Once].
func (c *localCounters) Once(_ context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("once %q: %w", key, ErrBadTTL)
	}
	c.cmu.Lock()
	defer c.cmu.Unlock()
	now := time.Now()
	if at, ok := c.once[key]; ok && now.Before(at) {
		return false, nil
	}
	c.once[key] = now.Add(ttl)
	return true, nil
}

func (r *Redis) initCounters() {}

// tryAddScript adds ARGV[2] to field ARGV[1] of hash KEYS[1] unless the
// result would pass ARGV[3]; one script, so no other replica's charge can
// come between the read and the write. It returns {value, 1 if added}.
// The comparison is in Lua numbers (exact to 2^53, far past any budget);
// the write is HINCRBY, exact in int64.
var tryAddScript = redis.NewScript(`
local v = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if v + tonumber(ARGV[2]) > tonumber(ARGV[3]) then
  return {v, 0}
end
return {redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2]), 1}
`)

// Add implements [Counters.Add] with HINCRBY.
func (r *Redis) Add(ctx context.Context, key, field string, n int64) (int64, error) {
	v, err := r.client.HIncrBy(ctx, r.key("count", key), field, n).Result()
	return v, r.wrap("add", err)
}

// TryAdd implements [Counters.TryAdd] with one script.
func (r *Redis) TryAdd(ctx context.Context, key, field string, n, limit int64) (int64, bool, error) {
	res, err := tryAddScript.Run(ctx, r.client, []string{r.key("count", key)}, field, n, limit).Int64Slice()
	if err != nil {
		return 0, false, r.wrap("try add", err)
	}
	if len(res) != 2 {
		return 0, false, r.wrap("try add", fmt.Errorf("script answered %d values, want 2", len(res)))
	}
	return res[0], res[1] == 1, nil
}

// Counts implements [Counters.Counts] with HGETALL.
func (r *Redis) Counts(ctx context.Context, key string) (map[string]int64, error) {
	m, err := r.client.HGetAll(ctx, r.key("count", key)).Result()
	if err != nil {
		return nil, r.wrap("counts", err)
	}
	out := make(map[string]int64, len(m))
	for f, s := range m {
		var v int64
		if _, err := fmt.Sscan(s, &v); err != nil {
			return nil, r.wrap("counts", fmt.Errorf("field %q is %q, not an integer", f, s))
		}
		out[f] = v
	}
	return out, nil
}

// Touch implements [Counters.Touch] with PEXPIRE.
func (r *Redis) Touch(ctx context.Context, key string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("touch %q: %w", key, ErrBadTTL)
	}
	return r.wrap("touch", r.client.PExpire(ctx, r.key("count", key), ttl).Err())
}

// AppendRecord implements [Counters.AppendRecord]: RPUSH and LTRIM in one
// MULTI, so the log is never left past its bound.
func (r *Redis) AppendRecord(ctx context.Context, log string, rec []byte) error {
	k := r.key("records", log)
	_, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, k, rec)
		p.LTrim(ctx, k, -MaxRecords, -1)
		return nil
	})
	return r.wrap("append record", err)
}

// Records implements [Counters.Records] with LRANGE.
func (r *Redis) Records(ctx context.Context, log string, max int) ([][]byte, error) {
	start := int64(0)
	if max > 0 {
		start = -int64(max)
	}
	ss, err := r.client.LRange(ctx, r.key("records", log), start, -1).Result()
	if err != nil {
		return nil, r.wrap("records", err)
	}
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out, nil
}

// Once implements [Counters.Once] with SET NX PX: only the first SET
// within ttl creates the key.
func (r *Redis) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("once %q: %w", key, ErrBadTTL)
	}
	ok, err := r.client.SetNX(ctx, r.key("once", key), r.opts.Replica, ttl).Result()
	if err != nil {
		return false, r.wrap("once", err)
	}
	return ok, nil
}
