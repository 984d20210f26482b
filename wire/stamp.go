package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// Result types (resultType on every 2026-07-28 result).
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
	// ResultTask is the tasks extension's CreateTaskResult.
	ResultTask = "task"
)

// Cache scopes.
const (
	ScopePublic  = "public"
	ScopePrivate = "private"
)

// ErrNotObject is returned by [Stamp] for a result that is not one valid
// JSON object.
var ErrNotObject = errors.New("result is not a JSON object")

// ErrBadStamp is returned by [Stamp] for stamps it cannot write: ServerInfo
// not a JSON object, a negative TTLMs, a scope other than [ScopePublic] and
// [ScopePrivate].
var ErrBadStamp = errors.New("invalid stamp")

// Cache is the cache hint of a cacheable result: ttlMs (≥ 0) and cacheScope.
type Cache struct {
	TTLMs int64
	Scope string
}

// Stamping is what [Stamp] writes into a result; zero fields write nothing.
type Stamping struct {
	// ResultType is written only if the result has none: an upstream's
	// "input_required" or "task" stands.
	ResultType string
	// ServerInfo (an Implementation object) replaces any
	// _meta["io.modelcontextprotocol/serverInfo"]; the rest of _meta stays.
	ServerInfo json.RawMessage
	// Cache replaces any ttlMs and cacheScope.
	Cache *Cache
}

type kv struct {
	key string
	val []byte
}

// Stamp writes s into the result object raw at its top level, without
// decoding it: every upstream byte outside the members it replaces is kept as
// it came (a 20 MB result is copied once, its numbers and escapes untouched).
// The members written go last. The output decodes as raw decoded and merged
// with s would.
func Stamp(raw []byte, s Stamping) ([]byte, error) {
	if !isObject(raw) {
		return nil, ErrNotObject
	}
	ms, err := jsonscan.Members(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	if s.ServerInfo != nil && (!isObject(s.ServerInfo) || !jsonscan.Valid(s.ServerInfo)) {
		return nil, fmt.Errorf("%w: serverInfo is not a JSON object", ErrBadStamp)
	}
	if s.Cache != nil && (s.Cache.TTLMs < 0 || s.Cache.Scope != ScopePublic && s.Cache.Scope != ScopePrivate) {
		return nil, fmt.Errorf("%w: cache %+v", ErrBadStamp, *s.Cache)
	}
	drop := map[int]bool{}
	rewrite := map[int][]byte{}
	var add []kv
	hasType, lastMeta := false, -1
	for i, m := range ms {
		switch key(raw, m) {
		case "resultType":
			hasType = true
		case "_meta":
			if s.ServerInfo != nil {
				if lastMeta >= 0 {
					drop[lastMeta] = true
				}
				lastMeta = i
			}
		case "ttlMs", "cacheScope":
			if s.Cache != nil {
				drop[i] = true
			}
		}
	}
	if s.ResultType != "" && !hasType {
		add = append(add, kv{"resultType", quote(s.ResultType)})
	}
	if s.ServerInfo != nil {
		if lastMeta >= 0 && isObject(raw[ms[lastMeta].ValueStart:ms[lastMeta].ValueEnd]) {
			meta, err := splice(raw[ms[lastMeta].ValueStart:ms[lastMeta].ValueEnd],
				func(k string) bool { return k == MetaServerInfo }, []kv{{MetaServerInfo, s.ServerInfo}})
			if err != nil {
				return nil, err
			}
			rewrite[lastMeta] = meta
		} else {
			if lastMeta >= 0 {
				drop[lastMeta] = true
			}
			add = append(add, kv{"_meta", append(append([]byte(`{"`+MetaServerInfo+`":`), s.ServerInfo...), '}')})
		}
	}
	if s.Cache != nil {
		add = append(add, kv{"ttlMs", strconv.AppendInt(nil, s.Cache.TTLMs, 10)},
			kv{"cacheScope", quote(s.Cache.Scope)})
	}
	return write(raw, ms, drop, rewrite, add), nil
}

// splice is Stamp's edit of a nested object: members whose key drop says are
// removed, add appended.
func splice(obj []byte, dropKey func(string) bool, add []kv) ([]byte, error) {
	ms, err := jsonscan.Members(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotObject, err)
	}
	drop := map[int]bool{}
	for i, m := range ms {
		if dropKey(key(obj, m)) {
			drop[i] = true
		}
	}
	return write(obj, ms, drop, nil, add), nil
}

// key is a member's key unescaped ("res\u0075ltType" is resultType).
func key(b []byte, m jsonscan.Member) string {
	return jsonscan.Unquote(b[m.KeyStart-1 : m.KeyEnd+1])
}

// write copies the object b with members drop removed (each with the comma
// that joined it), rewrite's values in place of theirs, and add appended before
// the closing brace. Whitespace between kept members is kept.
func write(b []byte, ms []jsonscan.Member, drop map[int]bool, rewrite map[int][]byte, add []kv) []byte {
	open := jsonscan.SkipSpace(b, 0)
	end := len(b)
	for end > 0 && b[end-1] != '}' {
		end--
	}
	closing := end - 1
	out := make([]byte, 0, len(b)+64*len(add)+sizeOf(rewrite))
	out = append(out, b[:open+1]...)
	cur := open + 1
	kept := false
	for i, m := range ms {
		start := m.KeyStart - 1
		if drop[i] {
			if kept {
				cur = m.ValueEnd // drop ", member" after the last kept one
			} else if i+1 < len(ms) {
				cur = ms[i+1].KeyStart - 1 // drop "member ," before the next
			} else {
				cur = m.ValueEnd
			}
			continue
		}
		if !kept && cur < start {
			// The first kept member follows dropped ones: keep only the
			// whitespace before it, not the comma that joined them.
			out = append(out, spaceOnly(b[cur:start])...)
		} else {
			out = append(out, b[cur:start]...)
		}
		if v, ok := rewrite[i]; ok {
			out = append(out, b[start:m.ValueStart]...)
			out = append(out, v...)
		} else {
			out = append(out, b[start:m.ValueEnd]...)
		}
		cur = m.ValueEnd
		kept = true
	}
	tail := b[cur:closing]
	for _, a := range add {
		if kept {
			out = append(out, ',')
		}
		out = append(out, quote(a.key)...)
		out = append(out, ':')
		out = append(out, a.val...)
		kept = true
	}
	out = append(out, spaceOnly(tail)...)
	return append(out, b[closing:]...)
}

func spaceOnly(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			out = append(out, c)
		}
	}
	return out
}

func sizeOf(m map[int][]byte) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
