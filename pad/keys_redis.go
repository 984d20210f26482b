package pad

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Keyed values and snapshots on Redis are the keys keys, keys:history and
// snapshots of [layout.RedisPadParts].
//
// Expiry times are inside base:keys and judged by the pad's clock; no
// native TTL is set (see keys.go).

func (s *redisStore) readKeys() ([]byte, bool, error) { return s.get(layout.RedisPadKeys, "read keys") }

// fencedHSetScript sets one hash field only while the lock holds the
// writer's token.
//
//	KEYS: lock, hash
//	ARGV: token, value, field
var fencedHSetScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
return 1`)

func (s *redisStore) fencedSet(lk heldLock, op, target, field string, data []byte) error {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return s.fail(op, errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := fencedHSetScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLock), target}, rl.token, data, field).Int64()
	if err != nil {
		return s.fail(op, err)
	}
	if n != 1 {
		return s.fail(op, fmt.Errorf("%w: the lease (%s) ran out and nothing was written", ErrLockLost, s.r.lease))
	}
	return nil
}

// writeKeysScript is the fenced write of the keys: the value, and for a
// change its history version (LPUSH, LTRIM) and the version bump, in one
// step.
//
//	KEYS: lock, keys, keys:history, version
//	ARGV: token, value, keep, history item (absent for a renewal)
var writeKeysScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('SET', KEYS[2], ARGV[2])
if #ARGV >= 4 then
	redis.call('LPUSH', KEYS[3], ARGV[4])
	redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
	redis.call('INCR', KEYS[4])
end
return 1`)

func (s *redisStore) writeKeys(lk heldLock, data []byte, hist *histPush) error {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return s.fail("write keys", errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	args := []any{rl.token, data, 0}
	if hist != nil {
		// Names increase even if clocks differ between hosts, as in commit.
		top, err := s.r.client.LIndex(ctx, s.key(layout.RedisPadKeysHistory), 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return s.fail("write keys", err)
		}
		seq := hist.now.UnixNano()
		if last, ok := parseHistItem(top); ok && seq <= last {
			seq = last + 1
		}
		args = append(args[:2], hist.keep, histItemBytes(seq, data))
	}
	n, err := writeKeysScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLock), s.key(layout.RedisPadKeys), s.key(layout.RedisPadKeysHistory), s.key(layout.RedisPadVersion)}, args...).Int64()
	if err != nil {
		return s.fail("write keys", err)
	}
	if n != 1 {
		return s.fail("write keys", fmt.Errorf("%w: the lease (%s) ran out and nothing was written", ErrLockLost, s.r.lease))
	}
	s.touch(ctx)
	return nil
}

func (s *redisStore) keysHistory(limit int) ([]histItem, error) {
	return s.listHistory(layout.RedisPadKeysHistory, limit)
}

func (s *redisStore) readSnapshot(name string) ([]byte, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	data, err := s.r.client.HGet(ctx, s.key(layout.RedisPadSnapshots), name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail("read snapshot", err)
	}
	return data, true, nil
}

func (s *redisStore) writeSnapshot(lk heldLock, name string, data []byte) error {
	if err := s.fencedSet(lk, "write snapshot", s.key(layout.RedisPadSnapshots), name, data); err != nil {
		return err
	}
	ctx, cancel := s.ctx()
	defer cancel()
	s.touch(ctx)
	return nil
}

func (s *redisStore) listSnapshots() ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	names, err := s.r.client.HKeys(ctx, s.key(layout.RedisPadSnapshots)).Result()
	if err != nil {
		return nil, s.fail("list snapshots", err)
	}
	sort.Strings(names)
	return names, nil
}

// quarantineKeysScript renames the keys to the broken key, fenced.
//
//	KEYS: lock, keys, broken
//	ARGV: token
var quarantineKeysScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return -1
end
if redis.call('EXISTS', KEYS[3]) == 1 then
	return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
	return 2
end
redis.call('RENAME', KEYS[2], KEYS[3])
return 1`)

func (s *redisStore) quarantineKeys(lk heldLock, now time.Time) (string, error) {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return "", s.fail("quarantine keys", errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	for i := 1; i < 1000; i++ {
		broken := s.key(layout.RedisPadKeysBroken(now.Unix(), i))
		n, err := quarantineKeysScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLock), s.key(layout.RedisPadKeys), broken}, rl.token).Int()
		if err != nil {
			return "", s.fail("quarantine keys", err)
		}
		switch n {
		case 1, 2:
			// Like a quarantined document, it expires with the pad.
			s.touch(ctx, broken)
			return broken, nil
		case -1:
			return "", s.fail("quarantine keys", fmt.Errorf("%w: the lease (%s) ran out and nothing was moved", ErrLockLost, s.r.lease))
		}
	}
	return "", s.fail("quarantine keys", errors.New("no free keys:broken:<time> key"))
}

// listHistory reads a history list (as history does the document's).
func (s *redisStore) listHistory(key layout.RedisPart, limit int) ([]histItem, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit - 1)
	}
	items, err := s.r.client.LRange(ctx, s.key(key), 0, stop).Result()
	if err != nil {
		return nil, s.fail("read history", err)
	}
	out := make([]histItem, 0, len(items))
	for _, it := range items {
		seq, ok := parseHistItem(it)
		if !ok {
			continue
		}
		data := []byte(it[21:])
		out = append(out, histItem{
			Version: Version{N: len(out) + 1, Time: time.Unix(0, seq).UTC(), Size: int64(len(data))},
			read:    func() ([]byte, error) { return data, nil },
		})
	}
	return out, nil
}
