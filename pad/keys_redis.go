package pad

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/redis/go-redis/v9"
)

// Keyed values and snapshots on Redis, beside the keys listed at
// redisStore:
//
//	base:keys       string   the keyed values, one JSON object (as keys.json)
//	base:snapshots  hash     snapshot name → JSON snapshot
//
// Expiry times are inside base:keys and judged by the pad's clock; no
// native TTL is set (see keys.go).

func (s *redisStore) readKeys() ([]byte, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	data, err := s.r.client.Get(ctx, s.key("keys")).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail("read keys", err)
	}
	return data, true, nil
}

// fencedSetScript writes one value (a string, or a hash field when
// ARGV[3] is not empty) only while the lock holds the writer's token, and
// bumps the version when ARGV[4] is "1".
//
//	KEYS: lock, target, version
//	ARGV: token, value, hash field or "", bump
var fencedSetScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
if ARGV[3] == '' then
	redis.call('SET', KEYS[2], ARGV[2])
else
	redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
end
if ARGV[4] == '1' then
	redis.call('INCR', KEYS[3])
end
return 1`)

func (s *redisStore) fencedSet(lk heldLock, op, target, field string, data []byte, bump bool) error {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return s.fail(op, errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	b := "0"
	if bump {
		b = "1"
	}
	n, err := fencedSetScript.Run(ctx, s.r.client, []string{s.key("lock"), target, s.key("version")}, rl.token, data, field, b).Int64()
	if err != nil {
		return s.fail(op, err)
	}
	if n != 1 {
		return s.fail(op, fmt.Errorf("%w: the lease (%s) ran out and nothing was written", ErrLockLost, s.r.lease))
	}
	return nil
}

func (s *redisStore) writeKeys(lk heldLock, data []byte, bump bool) error {
	return s.fencedSet(lk, "write keys", s.key("keys"), "", data, bump)
}

func (s *redisStore) readSnapshot(name string) ([]byte, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	data, err := s.r.client.HGet(ctx, s.key("snapshots"), name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail("read snapshot", err)
	}
	return data, true, nil
}

func (s *redisStore) writeSnapshot(lk heldLock, name string, data []byte) error {
	return s.fencedSet(lk, "write snapshot", s.key("snapshots"), name, data, false)
}

func (s *redisStore) listSnapshots() ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	names, err := s.r.client.HKeys(ctx, s.key("snapshots")).Result()
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
		broken := s.key(fmt.Sprintf("keys:broken:%d", now.Unix()))
		if i > 1 {
			broken = s.key(fmt.Sprintf("keys:broken:%d-%d", now.Unix(), i))
		}
		n, err := quarantineKeysScript.Run(ctx, s.r.client, []string{s.key("lock"), s.key("keys"), broken}, rl.token).Int()
		if err != nil {
			return "", s.fail("quarantine keys", err)
		}
		switch n {
		case 1, 2:
			return broken, nil
		case -1:
			return "", s.fail("quarantine keys", fmt.Errorf("%w: the lease (%s) ran out and nothing was moved", ErrLockLost, s.r.lease))
		}
	}
	return "", s.fail("quarantine keys", errors.New("no free keys:broken:<time> key"))
}
