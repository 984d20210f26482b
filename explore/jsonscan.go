package explore

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"

	"github.com/tidwall/gjson"
	"github.com/tidwall/pretty"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The scanner below walks raw JSON bytes that were validated on load. It is
// iterative (a depth counter, no recursion), so 10,000 levels of nesting cost
// nothing but time, and it never indexes past the slice it is given.

func skipWS(b []byte, i int) int { return jsonscan.SkipSpace(b, i) }

// stringEnd returns the offset just past the string starting at b[i] == '"'
// (jsonscan.StringEnd).
func stringEnd(b []byte, i int) int { return jsonscan.StringEnd(b, i) }

// valueEnd returns the offset just past the value starting at b[i].
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			// Skip 8 bytes at a time to the next quote or bracket: c|0x20
			// is '{' for '[' and '{', '}' for ']' and '}'.
			for i+8 <= len(b) {
				x := binary.LittleEndian.Uint64(b[i:])
				y := x | 0x2020202020202020
				if t := hasZero(x^0x2222222222222222) | hasZero(y^0x7b7b7b7b7b7b7b7b) | hasZero(y^0x7d7d7d7d7d7d7d7d); t != 0 {
					i += bits.TrailingZeros64(t) / 8
					break
				}
				i += 8
			}
			if i >= len(b) {
				break
			}
			switch b[i] {
			case '"':
				i = stringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// child is one member of a container: for objects the key's raw span
// (quotes included), for arrays key is the zero span.
type child struct {
	key span
	val span
}

// scanChildren lists the members of the container in b[v.start:v.end].
func scanChildren(b []byte, v span) []child {
	b = b[:v.end]
	if v.start >= len(b) {
		return nil
	}
	obj := b[v.start] == '{'
	var out []child
	i := v.start + 1
	for {
		i = skipWS(b, i)
		if i >= len(b) || b[i] == '}' || b[i] == ']' {
			return out
		}
		var c child
		if obj {
			ke := stringEnd(b, i)
			c.key = span{i, ke}
			i = skipWS(b, ke)
			if i >= len(b) || b[i] != ':' {
				return out
			}
			i = skipWS(b, i+1)
		}
		ve := valueEnd(b, i)
		c.val = span{i, ve}
		out = append(out, c)
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			return out
		}
		i++
	}
}

// keyString decodes an object key's raw span.
func keyString(b []byte, k span) string {
	raw := b[k.start:k.end]
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	return gjson.ParseBytes(raw).String()
}

// jsonType names the JSON type of the value starting at b[i].
func jsonType(b []byte, i int) string {
	if i >= len(b) {
		return "missing"
	}
	switch b[i] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// compact returns v without insignificant whitespace.
func compact(b []byte, v span) []byte {
	raw := b[v.start:v.end]
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		return pretty.Ugly(raw)
	}
	return raw
}

// maxIndentDepth is the nesting beyond which values are printed compact:
// indenting 10,000 levels would cost quadratic time and output.
const maxIndentDepth = 64

// deeperThan reports whether the value in b[v.start:v.end] nests more than
// limit levels.
func deeperThan(b []byte, v span, limit int) bool {
	depth := 0
	for i := v.start; i < v.end; {
		switch b[i] {
		case '"':
			i = stringEnd(b[:v.end], i)
			continue
		case '{', '[':
			depth++
			if depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
		i++
	}
	return false
}

// prettyJSON re-indents v with two spaces, keeping short arrays on one line;
// values nested deeper than maxIndentDepth are printed compact.
func prettyJSON(b []byte, v span) []byte {
	raw := b[v.start:v.end]
	if deeperThan(b, v, maxIndentDepth) {
		return pretty.Ugly(raw)
	}
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		return bytes.TrimRight(pretty.PrettyOptions(raw, &pretty.Options{Indent: "  ", Width: 80}), "\n")
	}
	return raw
}

// quoteKey renders a key as a path segment: .name when it is a plain
// identifier, ["..."] otherwise.
func quoteKey(k string) string {
	if k == "" {
		return `[""]`
	}
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-')) {
			return "[" + strconv.Quote(k) + "]"
		}
	}
	return "." + k
}
