package pad

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// On Redis a pad's memory files are fields of its memory hash (path →
// content), their access times fields of memory:atime (Unix ms), each
// file's versions the list memory:history:{path} (newest first, each
// "%020d %020d\n" (revision, Unix ns) + content), and deleted files the
// sorted set memory:deleted (path by Unix ms). Every change is one
// script fenced by the pad's lock ([memBatch]), so a writer whose lease
// ran out changes nothing; the keys expire with the pad ([pad] redis_ttl).

// memFilesScript lists the files: path, length and access time, flat.
//
//	KEYS: memory, memory:atime
var memFilesScript = redis.NewScript(`
local out = {}
for _, p in ipairs(redis.call('HKEYS', KEYS[1])) do
	out[#out+1] = p
	out[#out+1] = redis.call('HSTRLEN', KEYS[1], p)
	out[#out+1] = redis.call('HGET', KEYS[2], p) or '0'
end
return out`)

func (s *redisStore) memFiles() ([]memory.Info, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	res, err := memFilesScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadMemory), s.key(layout.RedisPadMemoryAccess)}).Slice()
	if err != nil {
		return nil, s.fail("list memory files", err)
	}
	var out []memory.Info
	for i := 0; i+2 < len(res); i += 3 {
		p, _ := res[i].(string)
		n, _ := res[i+1].(int64)
		out = append(out, memory.Info{Path: p, Size: n, Accessed: msTime(res[i+2])})
	}
	sortInfos(out)
	return out, nil
}

// msTime reads a Unix ms value as Redis returns it; none (a file put in
// the hash by hand) is the zero time, which never expires.
func msTime(v any) time.Time {
	s, _ := v.(string)
	ms, _ := strconv.ParseInt(s, 10, 64)
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func (s *redisStore) memRead(path string) ([]byte, time.Time, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	var text *redis.StringCmd
	var at *redis.StringCmd
	_, err := s.r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		text = p.HGet(ctx, s.key(layout.RedisPadMemory), path)
		at = p.HGet(ctx, s.key(layout.RedisPadMemoryAccess), path)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, time.Time{}, false, s.fail("read memory file", err)
	}
	data, err := text.Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, s.fail("read memory file", err)
	}
	return data, msTime(at.Val()), true, nil
}

// memHistItem is a version as its list holds it.
func memHistItem(rev int64, now time.Time, text []byte) []byte {
	return append(fmt.Appendf(nil, "%020d %020d\n", rev, now.UnixNano()), text...)
}

// memHistParse reads a version of the list; ok is false for an item that
// is not one (set by hand), which is skipped.
func memHistParse(item string) (rev int64, at time.Time, text []byte, ok bool) {
	if len(item) < 42 || item[20] != ' ' || item[41] != '\n' {
		return 0, time.Time{}, nil, false
	}
	rev, err1 := strconv.ParseInt(item[:20], 10, 64)
	ns, err2 := strconv.ParseInt(item[21:41], 10, 64)
	if err1 != nil || err2 != nil || rev <= 0 {
		return 0, time.Time{}, nil, false
	}
	return rev, time.Unix(0, ns).UTC(), []byte(item[42:]), true
}

func (s *redisStore) memVersions(path string, limit int) ([]memVersion, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit - 1)
	}
	var items *redis.StringSliceCmd
	var del *redis.FloatCmd
	_, err := s.r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		items = p.LRange(ctx, s.key(layout.RedisPadMemoryHistory(path)), 0, stop)
		del = p.ZScore(ctx, s.key(layout.RedisPadMemoryDeleted), path)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, false, s.fail("read memory versions", err)
	}
	var vs []memVersion
	for _, it := range items.Val() {
		rev, at, text, ok := memHistParse(it)
		if !ok {
			continue
		}
		vs = append(vs, memVersion{Rev: rev, Time: at, Size: int64(len(text)), read: func() ([]byte, error) { return text, nil }})
	}
	return vs, del.Err() == nil, nil
}

// memTouchScript sets a file's access time, if the file is there.
//
//	KEYS: memory, memory:atime
//	ARGV: path, Unix ms
var memTouchScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
	redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1`)

func (s *redisStore) memTouch(path string, now time.Time) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := memTouchScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadMemory), s.key(layout.RedisPadMemoryAccess)}, path, now.UnixMilli()).Err(); err != nil {
		return s.fail("touch memory file", err)
	}
	return nil
}

// memBatchScript runs a batch of commands if the lock still holds the
// writer's token, all or none: ARGV is the token, then each command as
// its name, how many keys and arguments it has, the keys' indexes in
// KEYS, and its arguments. RENAMEIFEXISTS renames its first key to its
// second when the first exists (a RENAME of a missing key would stop the
// script half done).
//
//	KEYS: lock, then the keys the commands touch
var memBatchScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
local i = 2
while i <= #ARGV do
	local cmd, nk, na = ARGV[i], tonumber(ARGV[i+1]), tonumber(ARGV[i+2])
	local j = i + 3
	local a = {}
	for _ = 1, nk do
		a[#a+1] = KEYS[tonumber(ARGV[j])]
		j = j + 1
	end
	for _ = 1, na do
		a[#a+1] = ARGV[j]
		j = j + 1
	end
	if cmd == 'RENAMEIFEXISTS' then
		if redis.call('EXISTS', a[1]) == 1 then
			redis.call('RENAME', a[1], a[2])
		end
	else
		redis.call(cmd, unpack(a))
	end
	i = j
end
return 1`)

// memBatch gathers the commands of one fenced change.
type memBatch struct {
	keys  []string // KEYS[2:]
	index map[string]int
	args  []any
	extra []string // keys to give the pad's TTL afterwards
}

// cmd adds name on keys with args.
func (b *memBatch) cmd(name string, keys []string, args ...any) {
	if b.index == nil {
		b.index = map[string]int{}
	}
	b.args = append(b.args, name, len(keys), len(args))
	for _, k := range keys {
		i, ok := b.index[k]
		if !ok {
			b.keys = append(b.keys, k)
			i = len(b.keys) + 1 // KEYS[1] is the lock
			b.index[k] = i
		}
		b.args = append(b.args, i)
	}
	b.args = append(b.args, args...)
}

// run runs the batch fenced by lk.
func (s *redisStore) memRun(lk heldLock, what string, b *memBatch) error {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return s.fail(what, errors.New("not holding this pad's lock"))
	}
	if len(b.args) == 0 {
		return nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	keys := append([]string{s.key(layout.RedisPadLock)}, b.keys...)
	n, err := memBatchScript.Run(ctx, s.r.client, keys, append([]any{rl.token}, b.args...)...).Int64()
	switch {
	case err != nil && isTimeout(err):
		return s.fail(what, fmt.Errorf("%w: Redis did not answer within %s, so the change may or may not have been made; view the memory before sending it again: %v", ErrOutcomeUnknown, s.r.timeout, err))
	case err != nil:
		return s.fail(what, err)
	case n != 1:
		return s.fail(what, fmt.Errorf("%w: the lease (%s) ran out and nothing was written", ErrLockLost, s.r.lease))
	}
	s.touch(ctx, b.extra...)
	return nil
}

// push saves text as revision rev of path in b.
func (s *redisStore) memPush(b *memBatch, path string, rev int64, text []byte, now time.Time) {
	h := s.key(layout.RedisPadMemoryHistory(path))
	b.cmd("LPUSH", []string{h}, memHistItem(rev, now, text))
	b.extra = append(b.extra, h)
}

func (s *redisStore) memPut(lk heldLock, path string, prev, text []byte, rev int64, keep int, now time.Time) error {
	var b memBatch
	if prev != nil {
		s.memPush(&b, path, rev-1, prev, now)
	}
	b.cmd("HSET", []string{s.key(layout.RedisPadMemory)}, path, text)
	b.cmd("HSET", []string{s.key(layout.RedisPadMemoryAccess)}, path, now.UnixMilli())
	s.memPush(&b, path, rev, text, now)
	b.cmd("LTRIM", []string{s.key(layout.RedisPadMemoryHistory(path))}, 0, keep-1)
	b.cmd("ZREM", []string{s.key(layout.RedisPadMemoryDeleted)}, path)
	return s.memRun(lk, "write memory file", &b)
}

func (s *redisStore) memRemove(lk heldLock, paths []string, _ string, unsaved map[string]memUnsaved, keepDeleted int, now time.Time) error {
	var b memBatch
	for _, p := range paths {
		if u, ok := unsaved[p]; ok {
			s.memPush(&b, p, u.rev, u.text, now)
		}
		b.cmd("HDEL", []string{s.key(layout.RedisPadMemory)}, p)
		b.cmd("HDEL", []string{s.key(layout.RedisPadMemoryAccess)}, p)
		b.cmd("ZADD", []string{s.key(layout.RedisPadMemoryDeleted)}, now.UnixMilli(), p)
	}
	if err := s.memRun(lk, "remove memory file", &b); err != nil {
		return err
	}
	return s.memForget(lk, keepDeleted)
}

// memForget drops the versions of deleted files past the keep most
// recently deleted.
func (s *redisStore) memForget(lk heldLock, keep int) error {
	ctx, cancel := s.ctx()
	defer cancel()
	del := s.key(layout.RedisPadMemoryDeleted)
	n, err := s.r.client.ZCard(ctx, del).Result()
	if err != nil || n <= int64(keep) {
		return nil // forgetting waits for the next delete
	}
	old, err := s.r.client.ZRange(ctx, del, 0, n-int64(keep)-1).Result()
	if err != nil {
		return nil
	}
	var b memBatch
	for _, p := range old {
		b.cmd("DEL", []string{s.key(layout.RedisPadMemoryHistory(p))})
		b.cmd("ZREM", []string{del}, p)
	}
	return s.memRun(lk, "forget deleted memory versions", &b)
}

func (s *redisStore) memRename(lk heldLock, _, _ string, _ bool, moves [][2]string, unsaved map[string]memUnsaved, now time.Time) error {
	var b memBatch
	for _, m := range moves {
		text, at, ok, err := s.memRead(m[0])
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if u, ok := unsaved[m[0]]; ok {
			s.memPush(&b, m[0], u.rev, u.text, now)
		}
		oldH, newH := s.key(layout.RedisPadMemoryHistory(m[0])), s.key(layout.RedisPadMemoryHistory(m[1]))
		b.cmd("DEL", []string{newH}) // a deleted file's versions there are superseded
		b.cmd("RENAMEIFEXISTS", []string{oldH, newH})
		b.cmd("HSET", []string{s.key(layout.RedisPadMemory)}, m[1], text)
		b.cmd("HDEL", []string{s.key(layout.RedisPadMemory)}, m[0])
		b.cmd("HSET", []string{s.key(layout.RedisPadMemoryAccess)}, m[1], at.UnixMilli())
		b.cmd("HDEL", []string{s.key(layout.RedisPadMemoryAccess)}, m[0])
		b.cmd("ZREM", []string{s.key(layout.RedisPadMemoryDeleted)}, m[1])
		b.extra = append(b.extra, newH)
	}
	return s.memRun(lk, "rename memory file", &b)
}
