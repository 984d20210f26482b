package layout

import (
	"strconv"
	"strings"
)

// RedisPart names one key of a pad on Redis after the pad's base
// ([RedisBase]): the key is [RedisKey](base, part). Its field is
// unexported so that only this package makes one: every part is in
// [RedisPadParts], and no other package can name a key of a pad that the
// table (and with it the TTL and the admin's listing) does not know.
type RedisPart struct{ name string }

// String is the part as it follows the base: "doc", "broken:1700000000".
func (p RedisPart) String() string { return p.name }

// RedisKey is the key of part of the pad at base: "{base}:{part}".
func RedisKey(base string, part RedisPart) string { return RedisKeyPrefix(base) + part.name }

// RedisKeyPrefix starts every key of the pad at base: "{base}:" (what a
// SCAN of the pad's keys matches).
func RedisKeyPrefix(base string) string { return base + ":" }

// RedisExpiry says what ends a pad key's life.
type RedisExpiry int

const (
	// ExpiresWithPad: the pad's TTL ([pad] redis_ttl), set again by every
	// write; without a TTL the key stays.
	ExpiresWithPad RedisExpiry = iota + 1
	// ExpiresOwn: a life of its own that the TTL does not change (the
	// lock's lease, a retry guard's window).
	ExpiresOwn
)

// RedisPadPart is one row of [RedisPadParts].
type RedisPadPart struct {
	// Name is the part after the base, or for a family the start of it
	// ("broken:" of "broken:1700000000").
	Name string
	// Family: Name is followed by a suffix ([RedisPadBroken] …).
	Family bool
	Expiry RedisExpiry
	Doc    string
}

// The pad's keys with one name each. The type of a key is given for
// redis-cli readers; package pad's scripts rely on it.
var (
	RedisPadDoc           = padPart("doc", ExpiresWithPad, "string: the document")
	RedisPadHistory       = padPart("history", ExpiresWithPad, `list: saved versions, newest first, "%020d\n" (Unix ns) + document`)
	RedisPadLedger        = padPart("ledger", ExpiresWithPad, "list: ledger entries, oldest first, one JSON object each")
	RedisPadNotice        = padPart("notice", ExpiresWithPad, "list: notes for the next read")
	RedisPadVersion       = padPart("version", ExpiresWithPad, "integer: bumped by every document write and ledger change")
	RedisPadKeys          = padPart("keys", ExpiresWithPad, "string: the keyed values, one JSON object (as keys.json)")
	RedisPadKeysHistory   = padPart("keys:history", ExpiresWithPad, "list: versions of the keyed values, as history")
	RedisPadSnapshots     = padPart("snapshots", ExpiresWithPad, "hash: snapshot name → JSON snapshot")
	RedisPadLock          = padPart("lock", ExpiresOwn, "string: the writer's random token, with a lease (PX)")
	RedisPadNoGuard       = padPart("dedupe", ExpiresOwn, "never written: the guard key a script is given when the write has none (a cluster wants every key on the pad's slot)")
	RedisPadMemory        = padPart("memory", ExpiresWithPad, "hash: memory file path (relative to /memories) → content")
	RedisPadMemoryAccess  = padPart("memory:atime", ExpiresWithPad, "hash: memory file path → its last read or write, Unix ms (what [memory] ttl is judged by)")
	RedisPadMemoryDeleted = padPart("memory:deleted", ExpiresWithPad, "sorted set: deleted memory files' paths, scored by when (Unix ms); their versions are kept")
	redisPadBroken        = padFamily("broken:", ExpiresWithPad, "string: a quarantined document, broken:{unix}[-{n}]")
	redisPadKeysBroken    = padFamily("keys:broken:", ExpiresWithPad, "string: quarantined keyed values, keys:broken:{unix}[-{n}]")
	redisPadWriteGuard    = padFamily("dedupe:w:", ExpiresOwn, "string: a write's retry key, set for the dedupe window")
	redisPadAppendGuard   = padFamily("dedupe:", ExpiresOwn, "string: an append's hash, set for the dedupe window")
	redisPadMemoryHist    = padFamily("memory:history:", ExpiresWithPad, `list: a memory file's versions, newest first, "%020d %020d\n" (revision, Unix ns) + content; memory:history:{path}`)
)

// RedisPadParts lists every key of a pad: the parts above, in order, and
// the families. It is filled by their declarations, so it cannot miss one.
var RedisPadParts []RedisPadPart

func padPart(name string, e RedisExpiry, doc string) RedisPart {
	RedisPadParts = append(RedisPadParts, RedisPadPart{Name: name, Expiry: e, Doc: doc})
	return RedisPart{name}
}

func padFamily(prefix string, e RedisExpiry, doc string) string {
	RedisPadParts = append(RedisPadParts, RedisPadPart{Name: prefix, Family: true, Expiry: e, Doc: doc})
	return prefix
}

// RedisPadTTLParts are the single keys (no family) that the pad's TTL
// expires: what a write sets to expire again. A family member that
// expires with the pad is given its TTL when it is made.
func RedisPadTTLParts() []RedisPart {
	var out []RedisPart
	for _, p := range RedisPadParts {
		if p.Expiry == ExpiresWithPad && !p.Family {
			out = append(out, RedisPart{p.Name})
		}
	}
	return out
}

// quarantined is "{prefix}{unix}", or "{prefix}{unix}-{n}" for the n-th
// try (n > 1) when that second already has one.
func quarantined(prefix string, unix int64, n int) RedisPart {
	s := prefix + strconv.FormatInt(unix, 10)
	if n > 1 {
		s += "-" + strconv.Itoa(n)
	}
	return RedisPart{s}
}

// RedisPadBroken is a quarantined document: broken:{unix}[-{n}].
func RedisPadBroken(unix int64, n int) RedisPart { return quarantined(redisPadBroken, unix, n) }

// RedisPadKeysBroken is quarantined keyed values: keys:broken:{unix}[-{n}].
func RedisPadKeysBroken(unix int64, n int) RedisPart {
	return quarantined(redisPadKeysBroken, unix, n)
}

// RedisPadWriteGuard records a write's retry key: dedupe:w:{key}.
func RedisPadWriteGuard(key string) RedisPart { return RedisPart{redisPadWriteGuard + key} }

// RedisPadAppendGuard records an append's hash: dedupe:{hash}.
func RedisPadAppendGuard(hash string) RedisPart { return RedisPart{redisPadAppendGuard + hash} }

// ParseRedisPadKey names the row of [RedisPadParts] that key, a key of the
// pad at base, is; ok is false for a key that is not one of the pad's (not
// under base, or a part the table does not have). The longest family
// prefix wins (dedupe:w: before dedupe:).
func ParseRedisPadKey(base, key string) (RedisPadPart, bool) {
	rest, ok := strings.CutPrefix(key, RedisKeyPrefix(base))
	if !ok {
		return RedisPadPart{}, false
	}
	var best RedisPadPart
	found := false
	for _, p := range RedisPadParts {
		switch {
		case !p.Family && rest == p.Name:
			return p, true
		case p.Family && len(rest) > len(p.Name) && strings.HasPrefix(rest, p.Name) && len(p.Name) > len(best.Name):
			best, found = p, true
		}
	}
	return best, found
}

// RedisPadMemoryHistory holds the versions of the memory file at path
// (relative to /memories): memory:history:{path}.
func RedisPadMemoryHistory(path string) RedisPart { return RedisPart{redisPadMemoryHist + path} }
