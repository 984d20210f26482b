package pad

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/redis/go-redis/v9"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/redisurl"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Defaults of [RedisOptions].
const (
	DefaultRedisPrefix  = layout.DefaultRedisPrefix
	DefaultLockLease    = 15 * time.Second
	DefaultLockWait     = 30 * time.Second
	DefaultRedisTimeout = 5 * time.Second
)

// RedisOptions configures [NewRedis]. The zero value of every field but
// URL means its default.
type RedisOptions struct {
	// URL is redis://[user:password@]host[:port][/db] or rediss:// (TLS).
	// Query parameters go-redis understands (dial_timeout=3s, …) are
	// passed on. The password is never shown: see [Redis.String].
	URL string
	// Prefix starts every key; "" means "scratchpad". It must not contain
	// braces, which would move the pad's keys off their cluster slot.
	Prefix string
	// LockLease is how long a writer's lock lives if it is not released
	// (the writer died); 0 means 15s. A write that takes longer than the
	// lease is refused (see [ErrLockLost]).
	LockLease time.Duration
	// LockWait bounds how long a writer waits for the lock before giving
	// up with [ErrLocked]; 0 means 30s.
	LockWait time.Duration
	// Timeout bounds each Redis round trip; 0 means 5s.
	Timeout time.Duration
	// TTL, when positive, makes an idle pad expire: every write sets the
	// pad's keys to expire TTL later ([pad] redis_ttl).
	TTL time.Duration
}

// Redis is a connection to one Redis server that pads live on. It is safe
// for concurrent use; open every pad on one server through one Redis.
type Redis struct {
	client  *redis.Client
	url     string // redacted
	prefix  string
	lease   time.Duration
	wait    time.Duration
	timeout time.Duration
	ttl     time.Duration
}

// NewRedis checks o and returns a client for the server; it does no I/O
// (see [Redis.Ping]). A bad URL is an error wrapping [ErrOptions] that
// never shows the password.
func NewRedis(o RedisOptions) (*Redis, error) {
	redisurl.Quiet()
	redacted, err := redisurl.Check(o.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: redis url %s: %v", ErrOptions, redacted, err)
	}
	ro, err := redis.ParseURL(o.URL) // checked above: options only
	if err != nil {
		return nil, fmt.Errorf("%w: redis url %s: %v", ErrOptions, redacted, err)
	}
	if o.Prefix == "" {
		o.Prefix = DefaultRedisPrefix
	}
	if msg := layout.CheckRedisPrefix(o.Prefix); msg != "" {
		return nil, fmt.Errorf("%w: redis prefix %q: %s", ErrOptions, o.Prefix, msg)
	}
	if o.LockLease <= 0 {
		o.LockLease = DefaultLockLease
	}
	o.LockLease = max(o.LockLease, time.Millisecond) // PX counts milliseconds
	if o.LockWait <= 0 {
		o.LockWait = DefaultLockWait
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultRedisTimeout
	}
	// No retries: a retried RPUSH or script whose reply was lost would
	// run twice (a duplicate ledger entry or history version). An error
	// is returned instead and the next call dials afresh.
	ro.MaxRetries = -1
	ro.DisableIdentity = true // CLIENT SETINFO is unknown before Redis 7.2
	if ro.DialTimeout == 0 {
		ro.DialTimeout = o.Timeout
	}
	if ro.ReadTimeout == 0 {
		ro.ReadTimeout = o.Timeout
	}
	if ro.WriteTimeout == 0 {
		ro.WriteTimeout = o.Timeout
	}
	ro.DialerRetries = 1
	return &Redis{client: redis.NewClient(ro), url: redacted, prefix: o.Prefix,
		lease: o.LockLease, wait: o.LockWait, timeout: o.Timeout, ttl: max(o.TTL, 0)}, nil
}

// String is the server's URL with the password redacted.
func (r *Redis) String() string { return r.url }

// Ping checks that the server answers, within ctx.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis %s: ping: %w", r.url, err)
	}
	return nil
}

// Close closes the connections. Pads opened through r stop working.
func (r *Redis) Close() error { return r.client.Close() }

// Open returns the pad id on this server, with the same behaviour as a
// pad directory ([Open]). id names the pad under the key prefix (the
// server uses "run:<run id>" and "agent:<name>"); every key of the pad
// carries it as a hash tag, {id}, so a pad lives on one cluster slot and
// its scripts may touch all of its keys. Nothing is read or written until
// the first call.
func (r *Redis) Open(id string, opts Options) (*Pad, error) {
	if msg := checkPadID(id); msg != "" {
		if _, err := opts.normalize(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: pad id %q: %s", ErrOptions, id, msg)
	}
	return openStore(opts, func(file, ext string) store {
		base := layout.RedisBase(r.prefix, id)
		return &redisStore{r: r, id: id, file: file, base: base, name: "pad " + r.url + " " + describeID(id)}
	})
}

func checkPadID(id string) string {
	switch {
	case id == "":
		return "must not be empty"
	case len(id) > 200:
		return "longer than 200 bytes"
	case strings.ContainsAny(id, "{}"):
		return "must not contain braces (they delimit the key's hash tag)"
	}
	for _, c := range id {
		if unicode.IsSpace(c) || unicode.IsControl(c) {
			return "must not contain spaces or control characters"
		}
	}
	return ""
}

// describeID names a pad in messages: "run:r1" reads run "r1".
func describeID(id string) string {
	if kind, rest, ok := strings.Cut(id, ":"); ok && kind != "" && rest != "" {
		return fmt.Sprintf("%s %q", kind, rest)
	}
	return strconv.Quote(id)
}

// redisStore keeps one pad under base = prefix:{id}, in the keys
// [layout.RedisPadParts] lists (base:doc, base:history, base:lock, …):
// every key is [redisStore.key] of a [layout.RedisPart].
type redisStore struct {
	r    *Redis
	id   string
	file string // mdFile or jsonFile, for messages
	base string
	name string // "pad <url> run \"r1\"", starts every error
}

func (s *redisStore) key(part layout.RedisPart) string { return layout.RedisKey(s.base, part) }

// ttlKeys are the keys of a pad that [RedisOptions.TTL] expires: the
// table's, so a new key cannot be left out (quarantined copies get theirs
// when they are made; the lock has its own lease).
var ttlKeys = layout.RedisPadTTLParts()

// touch sets the pad's keys, and extra keys, to expire after the TTL, if
// there is one. It follows a write that succeeded, so its failure is not
// that write's: it is ignored, and the next write sets the TTL again.
func (s *redisStore) touch(ctx context.Context, extra ...string) {
	if s.r.ttl <= 0 {
		return
	}
	_, _ = s.r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range ttlKeys {
			p.PExpire(ctx, s.key(k), s.r.ttl)
		}
		for _, k := range extra {
			p.PExpire(ctx, k, s.r.ttl)
		}
		return nil
	})
}

func (s *redisStore) location() string { return s.r.url + " " + s.base }
func (s *redisStore) docPath() string  { return s.r.url + " " + s.key(layout.RedisPadDoc) }
func (s *redisStore) dir() string      { return "" }

// fail names the pad and the operation in a Redis error.
func (s *redisStore) fail(op string, err error) error {
	return fmt.Errorf("%s: %s: %w", s.name, op, err)
}

func (s *redisStore) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.r.timeout)
}

// redisLock is a held lock: the token only its holder knows.
type redisLock struct {
	s     *redisStore
	token string
	once  string // when set, the commit records this write's retry key ([onceLock])
}

// onceKey is where a write's retry key is recorded.
func (s *redisStore) onceKey(key string) string { return s.key(layout.RedisPadWriteGuard(key)) }

// markOnce implements [onceLock]: the lock's commit records key, so
// that a retry of the same write is recognised.
func (l *redisLock) markOnce(key string) { l.once = key }

// appliedOnce implements [onceLock].
func (l *redisLock) appliedOnce(key string) (bool, error) {
	ctx, cancel := l.s.ctx()
	defer cancel()
	n, err := l.s.r.client.Exists(ctx, l.s.onceKey(key)).Result()
	if err != nil {
		return false, l.s.fail("check a retried write", err)
	}
	return n > 0, nil
}

// releaseScript deletes the lock only if it is still ours: after a lease
// expired, the key may belong to the next writer.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0`)

func (l *redisLock) unlock() {
	ctx, cancel := l.s.ctx()
	defer cancel()
	// An error leaves the lock to expire with its lease.
	_ = releaseScript.Run(ctx, l.s.r.client, []string{l.s.key(layout.RedisPadLock)}, l.token).Err()
}

// lock takes the lock with SET NX PX, retrying with a growing backoff
// until the wait bound.
func (s *redisStore) lock() (heldLock, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	deadline := time.Now().Add(s.r.wait)
	backoff := 2 * time.Millisecond
	for {
		ctx, cancel := s.ctx()
		err := s.r.client.Do(ctx, "SET", s.key(layout.RedisPadLock), token, "NX", "PX", s.r.lease.Milliseconds()).Err()
		cancel()
		switch {
		case err == nil:
			return &redisLock{s: s, token: token}, nil
		case !errors.Is(err, redis.Nil):
			return nil, s.fail("lock", err)
		}
		if time.Now().After(deadline) {
			return nil, s.fail("lock", fmt.Errorf("%w: another writer held it for over %s", ErrLocked, s.r.wait))
		}
		// Jitter spreads writers that collided, so they do not collide
		// again in step.
		time.Sleep(backoff + time.Duration(randUint64()%uint64(backoff)))
		backoff = min(backoff*2, 100*time.Millisecond)
	}
}

func randUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

func (s *redisStore) readDoc() ([]byte, bool, error) {
	return s.get(layout.RedisPadDoc, "read "+s.file)
}

// get reads the string key name of the pad; ok is false when it does not
// exist. what names the operation in an error.
func (s *redisStore) get(name layout.RedisPart, what string) (data []byte, ok bool, err error) {
	ctx, cancel := s.ctx()
	defer cancel()
	data, err = s.r.client.Get(ctx, s.key(name)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, s.fail(what, err)
	}
	return data, true, nil
}

// commitScript is the fenced write: nothing happens unless the lock still
// holds our token. Document, history push and trim, and the version bump
// are one atomic step.
//
//	KEYS: lock, doc, history, version
//	ARGV: token, document, keep, history items (oldest first)
var commitScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call('SET', KEYS[2], ARGV[2])
for i = 5, #ARGV do
	redis.call('LPUSH', KEYS[3], ARGV[i])
end
if #ARGV >= 5 then
	redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
end
redis.call('INCR', KEYS[4])
if tonumber(ARGV[4]) > 0 then
	redis.call('SET', KEYS[5], '1', 'PX', ARGV[4])
end
return 1`)

// beforeRedisCommit, when set by a test, runs after a commit has read what
// it needs and before its script: where a lease can run out.
var beforeRedisCommit func()

func (s *redisStore) commit(lk heldLock, prev, next []byte, pushNext bool, keep int, now time.Time) error {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return s.fail("write "+s.file, errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	window, dkey := int64(0), s.key(layout.RedisPadNoGuard)
	if rl.once != "" {
		window, dkey = AppendDedupeWindow.Milliseconds(), s.onceKey(rl.once)
	}
	args := []any{rl.token, next, keep, window}
	if prev != nil || pushNext {
		// Names must increase even if clocks differ between hosts: start
		// after the newest saved version. Only lock holders push, so it
		// cannot change before the script runs.
		top, err := s.r.client.LIndex(ctx, s.key(layout.RedisPadHistory), 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return s.fail("write "+s.file, err)
		}
		seq := now.UnixNano()
		if last, ok := parseHistItem(top); ok && seq <= last {
			seq = last + 1
		}
		if prev != nil {
			args = append(args, histItemBytes(seq, prev))
			seq++
		}
		if pushNext {
			args = append(args, histItemBytes(seq, next))
		}
	}
	if beforeRedisCommit != nil {
		beforeRedisCommit()
	}
	n, err := commitScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLock), s.key(layout.RedisPadDoc), s.key(layout.RedisPadHistory), s.key(layout.RedisPadVersion), dkey}, args...).Int64()
	if err != nil && isTimeout(err) {
		// Fenced by the lock: applied only if Redis runs it before the
		// lease ends. Patches that add are not idempotent: the agent must
		// look before it sends them again.
		return s.fail("write "+s.file, fmt.Errorf("%w: Redis did not answer within %s, so the update may or may not have been applied (it is, if Redis ran it within the %s lock lease); read the pad before sending it again: %v", ErrOutcomeUnknown, s.r.timeout, s.r.lease, err))
	}
	if err != nil {
		return s.fail("write "+s.file, err)
	}
	if n != 1 {
		return s.fail("write "+s.file, fmt.Errorf("%w: the lease (%s) ran out and nothing was written", ErrLockLost, s.r.lease))
	}
	s.touch(ctx)
	return nil
}

func histItemBytes(seq int64, data []byte) []byte {
	return append([]byte(fmt.Sprintf("%020d\n", seq)), data...)
}

// parseHistItem returns the save time of a history item.
func parseHistItem(item string) (int64, bool) {
	if len(item) < 21 || item[20] != '\n' {
		return 0, false
	}
	n, err := strconv.ParseInt(item[:20], 10, 64)
	return n, err == nil
}

// quarantineScript renames the document to the broken key, fenced like
// commit. It returns the moved document, 0 when the broken key is taken
// (try another name), -1 when the lock is lost, -2 when there is no
// document.
//
//	KEYS: lock, doc, broken, version
//	ARGV: token
var quarantineScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
	return -1
end
if redis.call('EXISTS', KEYS[3]) == 1 then
	return 0
end
local raw = redis.call('GET', KEYS[2])
if not raw then
	return -2
end
redis.call('RENAME', KEYS[2], KEYS[3])
redis.call('INCR', KEYS[4])
return raw`)

func (s *redisStore) quarantine(lk heldLock, now time.Time) (string, []byte, error) {
	rl, ok := lk.(*redisLock)
	if !ok || rl.s != s {
		return "", nil, s.fail("quarantine", errors.New("not holding this pad's lock"))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	for i := 1; i < 1000; i++ {
		broken := s.key(layout.RedisPadBroken(now.Unix(), i))
		res, err := quarantineScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLock), s.key(layout.RedisPadDoc), broken, s.key(layout.RedisPadVersion)}, rl.token).Result()
		if err != nil {
			return "", nil, s.fail("quarantine", err)
		}
		switch v := res.(type) {
		case string:
			s.touch(ctx, broken)
			return broken, []byte(v), nil
		case int64:
			switch v {
			case 0:
				continue
			case -1:
				return "", nil, s.fail("quarantine", fmt.Errorf("%w: the lease (%s) ran out and nothing was moved", ErrLockLost, s.r.lease))
			case -2:
				return "", nil, s.fail("quarantine", errors.New("the document is gone"))
			}
		}
		return "", nil, s.fail("quarantine", fmt.Errorf("unexpected reply %v", res))
	}
	return "", nil, s.fail("quarantine", errors.New("no free broken:<time> key"))
}

func (s *redisStore) history(limit int) ([]histItem, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	stop := int64(-1)
	if limit > 0 {
		stop = int64(limit - 1)
	}
	items, err := s.r.client.LRange(ctx, s.key(layout.RedisPadHistory), 0, stop).Result()
	if err != nil {
		return nil, s.fail("read history", err)
	}
	out := make([]histItem, 0, len(items))
	for _, it := range items {
		seq, ok := parseHistItem(it)
		if !ok {
			continue // not ours (set by hand): skipped, as stray files are
		}
		data := []byte(it[21:])
		out = append(out, histItem{
			Version: Version{N: len(out) + 1, Time: time.Unix(0, seq).UTC(), Size: int64(len(data))},
			read:    func() ([]byte, error) { return data, nil },
		})
	}
	return out, nil
}

func (s *redisStore) addNotice(_ heldLock, note string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	if err := s.r.client.RPush(ctx, s.key(layout.RedisPadNotice), strings.ReplaceAll(note, "\n", " ")).Err(); err != nil {
		return s.fail("write notice", err)
	}
	s.touch(ctx)
	return nil
}

func (s *redisStore) notices(consume bool) ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	if !consume {
		notes, err := s.r.client.LRange(ctx, s.key(layout.RedisPadNotice), 0, -1).Result()
		if err != nil {
			return nil, s.fail("read notices", err)
		}
		return notes, nil
	}
	// MULTI: read and delete in one step, so two readers never both show
	// (or both miss) a note.
	var lr *redis.StringSliceCmd
	_, err := s.r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		lr = p.LRange(ctx, s.key(layout.RedisPadNotice), 0, -1)
		p.Del(ctx, s.key(layout.RedisPadNotice))
		return nil
	})
	if err != nil {
		return nil, s.fail("read notices", err)
	}
	return lr.Val(), nil
}

// appendScript adds one entry and bumps the version, atomically, unless
// its dedupe key (ARGV[2], KEYS[3]) is already set: then it returns 0 and
// adds nothing.
//
//	KEYS: ledger, version, dedupe
//	ARGV: entry, dedupe ("" for none), window in ms
var appendScript = redis.NewScript(`
if ARGV[2] ~= '' then
	if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[3]) then
		return 0
	end
end
redis.call('RPUSH', KEYS[1], ARGV[1])
return redis.call('INCR', KEYS[2])`)

// AppendDedupeWindow is how long a ledger append on Redis is remembered
// so that its retry is not added twice: a write that timed out may be
// applied when Redis comes back, and the agent's retry must not duplicate
// it.
const AppendDedupeWindow = 5 * time.Minute

func (s *redisStore) appendEntry(e Entry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("pad: encode entry: %w", err)
	}
	dedupe, dkey := "", s.key(layout.RedisPadNoGuard)
	if e.Mark == "" && e.By != "" {
		// The same agent's same finding: what a retry sends again (its
		// time differs). Without an author two agents' identical notes
		// could not be told apart: not deduplicated.
		h := sha256.New()
		for _, part := range append([]string{e.By, e.Note}, e.Tags...) {
			h.Write([]byte(part))
			h.Write([]byte{0})
		}
		dedupe = hex.EncodeToString(h.Sum(nil)[:16])
		dkey = s.key(layout.RedisPadAppendGuard(dedupe))
	}
	ctx, cancel := s.ctx()
	defer cancel()
	n, err := appendScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLedger), s.key(layout.RedisPadVersion), dkey}, line, dedupe, AppendDedupeWindow.Milliseconds()).Int64()
	switch {
	case err != nil && isTimeout(err):
		return s.fail("append to ledger", fmt.Errorf("%w: Redis did not answer within %s, so the entry may or may not have been added; appending it again is safe (an identical append within %s is not added twice): %v", ErrOutcomeUnknown, s.r.timeout, AppendDedupeWindow, err))
	case err != nil:
		return s.fail("append to ledger", err)
	case n == 0:
		return fmt.Errorf("%w: you appended this identical note within the last %s; it is in the ledger once (a retry of a write whose answer was lost is not added again)", ErrAlreadyAppended, AppendDedupeWindow)
	}
	s.touch(ctx)
	return nil
}

// isTimeout reports whether a Redis call failed by running out of time:
// the command may still have been applied.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

func (s *redisStore) readLedger() ([]Entry, int, error) {
	items, err := s.ledgerItems()
	if err != nil {
		return nil, 0, err
	}
	var out []Entry
	bad := 0
	for _, it := range items {
		if e, ok := decodeEntry(it); ok {
			out = append(out, e)
		} else {
			bad++
		}
	}
	return out, bad, nil
}

func (s *redisStore) ledgerItems() ([]string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	items, err := s.r.client.LRange(ctx, s.key(layout.RedisPadLedger), 0, -1).Result()
	if err != nil {
		return nil, s.fail("read ledger", err)
	}
	return items, nil
}

func decodeEntry(item string) (Entry, bool) {
	var e Entry
	if err := json.Unmarshal([]byte(item), &e); err != nil || !e.valid() {
		return Entry{}, false
	}
	return e, true
}

// compactScript drops the first k ledger items if they are still the ones
// the caller read (same SHA-1 over their length-prefixed bytes: another
// compaction may have run meanwhile), then removes one copy of each
// unreadable item listed. Appends only add at the tail, so none is lost.
// It returns how many items went, or -1 when the head changed.
//
//	KEYS: ledger, version
//	ARGV: k, sha1 of the first k items, unreadable items beyond them
var compactScript = redis.NewScript(`
local k = tonumber(ARGV[1])
local n = 0
if k > 0 then
	local head = redis.call('LRANGE', KEYS[1], 0, k - 1)
	if #head ~= k then
		return -1
	end
	local parts = {}
	for i, v in ipairs(head) do
		parts[i] = #v .. ':' .. v
	end
	if redis.sha1hex(table.concat(parts)) ~= ARGV[2] then
		return -1
	end
	redis.call('LTRIM', KEYS[1], k, -1)
	n = k
end
for i = 3, #ARGV do
	n = n + redis.call('LREM', KEYS[1], 1, ARGV[i])
end
if n > 0 then
	redis.call('INCR', KEYS[2])
end
return n`)

// compactLedger drops the expired prefix (entries are appended in time
// order) and unreadable items anywhere. An expired entry behind a fresh
// one (a host whose clock is behind) stays until the entries before it
// expire; reads hide it meanwhile.
func (s *redisStore) compactLedger(cutoff time.Time) (int, error) {
	items, err := s.ledgerItems()
	if err != nil {
		return 0, err
	}
	k := 0
	for k < len(items) {
		if e, ok := decodeEntry(items[k]); ok && !e.Time.Before(cutoff) {
			break
		}
		k++
	}
	var bad []any
	for _, it := range items[k:] {
		if _, ok := decodeEntry(it); !ok {
			bad = append(bad, it)
		}
	}
	if k == 0 && len(bad) == 0 {
		return 0, nil
	}
	h := sha1.New()
	for _, it := range items[:k] {
		fmt.Fprintf(h, "%d:%s", len(it), it)
	}
	ctx, cancel := s.ctx()
	defer cancel()
	args := append([]any{k, hex.EncodeToString(h.Sum(nil))}, bad...)
	n, err := compactScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadLedger), s.key(layout.RedisPadVersion)}, args...).Int()
	if err != nil {
		return 0, s.fail("compact ledger", err)
	}
	if n < 0 {
		return 0, nil // another compaction got there first
	}
	return n, nil
}

// stampScript summarizes the pad: the version counter, which every write
// through a pad bumps, plus the document's hash and the ledger's length,
// which also catch a change made by hand with redis-cli.
var stampScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1]) or '0'
local d = redis.call('GET', KEYS[2])
local h = '-'
if d then
	h = redis.sha1hex(d)
end
return v .. '/' .. h .. '/' .. redis.call('LLEN', KEYS[3])`)

func (s *redisStore) stamp() (string, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	st, err := stampScript.Run(ctx, s.r.client, []string{s.key(layout.RedisPadVersion), s.key(layout.RedisPadDoc), s.key(layout.RedisPadLedger)}).Text()
	if err != nil {
		return "", s.fail("read version", err)
	}
	return st, nil
}

// cleanStale has nothing to do: writes are single scripts, so a crash
// leaves no partial state, and a dead writer's lock expires with its
// lease.
func (s *redisStore) cleanStale() error { return nil }
