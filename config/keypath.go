package config

import (
	"strconv"
	"strings"
)

// keyPath addresses a value in the document: table keys, and array
// indexes for [[array.tables]] and array elements.
type keyPath []seg

type seg struct {
	key   string
	idx   int
	isIdx bool
}

func (p keyPath) key(k string) keyPath {
	out := make(keyPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, seg{key: k})
}

func (p keyPath) index(i int) keyPath {
	out := make(keyPath, len(p), len(p)+1)
	copy(out, p)
	return append(out, seg{idx: i, isIdx: true})
}

// canon is the map key of p in [positions]: unambiguous for any key text.
func (p keyPath) canon() string {
	var b strings.Builder
	for i, s := range p {
		if i > 0 {
			b.WriteByte(0)
		}
		if s.isIdx {
			b.WriteByte(1)
			b.WriteString(strconv.Itoa(s.idx))
		} else {
			b.WriteByte(2)
			b.WriteString(s.key)
		}
	}
	return b.String()
}

// String renders p the way a user writes it: mcp.servers.k8s.timeout,
// mcp.servers.k8s.scratchpad."list_[pods", pad.sections[2].name.
func (p keyPath) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.idx))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteKey(s.key))
	}
	return b.String()
}

// quoteKey returns k bare when TOML allows it, else as a basic string.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyChar(k[i]) {
			return strconv.Quote(k)
		}
	}
	return k
}

func isBareKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
