package explore

import (
	"bytes"

	"github.com/tidwall/pretty"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The helpers below read raw JSON bytes that were validated on load, with
// internal/jsonscan's walkers (iterative: 10,000 levels of nesting cost
// nothing but time, and nothing past the slice given is read).

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
	var out []child
	if b[v.start] == '{' {
		jsonscan.Object(b, v.start, func(ks, ke, at int) int {
			ve := jsonscan.ValueEnd(b, at)
			out = append(out, child{key: span{ks, ke}, val: span{at, ve}})
			return ve
		})
		return out
	}
	jsonscan.Array(b, v.start, func(at int) int {
		ve := jsonscan.ValueEnd(b, at)
		out = append(out, child{val: span{at, ve}})
		return ve
	})
	return out
}

// keyString decodes an object key's raw span.
func keyString(b []byte, k span) string { return jsonscan.Unquote(b[k.start:k.end]) }

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

// prettyJSON re-indents v with two spaces, keeping short arrays on one line;
// values nested deeper than maxIndentDepth are printed compact.
func prettyJSON(b []byte, v span) []byte {
	raw := b[v.start:v.end]
	if jsonscan.DeeperThan(b[:v.end], v.start, maxIndentDepth) {
		return pretty.Ugly(raw)
	}
	if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
		return bytes.TrimRight(pretty.PrettyOptions(raw, &pretty.Options{Indent: "  ", Width: 80}), "\n")
	}
	return raw
}
