package reference

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Schema is a tool's input schema as its server lists it, read once: what
// type a parameter takes (a reference in a string's place is the text by
// default), and the validator the resolved arguments must pass.
type Schema struct {
	doc       any
	validator *tool.Schema // nil: the schema cannot be judged with (it is not checked)
}

// NewSchema reads raw, a tool's inputSchema. A schema the validator
// cannot compile still tells types; it just is not checked against.
func NewSchema(raw json.RawMessage) *Schema {
	s := &Schema{}
	if json.Unmarshal(raw, &s.doc) != nil {
		return s
	}
	s.validator, _ = tool.CompileSchema(raw)
	return s
}

// Schemas keeps the [Schema] of each listed input schema, so that a tool
// called many times reads its schema once. The zero value is ready.
type Schemas struct {
	mu sync.Mutex
	m  map[string]*Schema
}

// maxSchemas bounds the kept schemas; past it they are read again
// (listings that keep changing must not grow it without end).
const maxSchemas = 4096

// Of is the Schema of raw.
func (c *Schemas) Of(raw json.RawMessage) *Schema {
	c.mu.Lock()
	s := c.m[string(raw)]
	c.mu.Unlock()
	if s != nil {
		return s
	}
	s = NewSchema(raw)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxSchemas {
		c.m = map[string]*Schema{}
	}
	c.m[string(raw)] = s
	c.mu.Unlock()
	return s
}

// types is a set of JSON types ("string", "number", "integer", "object",
// "array", "boolean", "null"); nil means any.
type types map[string]bool

// intersect is what both a and b allow.
func intersect(a, b types) types {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := types{}
	for t := range a {
		if b[t] || t == "integer" && b["number"] {
			out[t] = true
		}
	}
	for t := range b {
		if t == "integer" && a["number"] {
			out[t] = true
		}
	}
	return out
}

// union is what a or b allows.
func union(a, b types) types {
	if a == nil || b == nil {
		return nil
	}
	out := types{}
	for t := range a {
		out[t] = true
	}
	for t := range b {
		out[t] = true
	}
	return out
}

// maxDepth bounds the schema walk ($ref cycles, deep nesting).
const maxDepth = 64

// stringOnly reports whether the parameter at l takes a string and no
// other kind of value but null: a reference there is text by default.
func (s *Schema) stringOnly(l location) bool {
	if s == nil || s.doc == nil {
		return false
	}
	t := s.allowed(s.doc, l, 0)
	if t == nil || !t["string"] {
		return false
	}
	for k := range t {
		if k != "string" && k != "null" {
			return false
		}
	}
	return true
}

// allowed is the types the schema node allows at l below it.
func (s *Schema) allowed(node any, l location, depth int) types {
	if depth > maxDepth {
		return nil
	}
	m, ok := node.(map[string]any)
	if !ok {
		if b, isBool := node.(bool); isBool && !b {
			return types{} // false: nothing
		}
		return nil
	}
	var out types
	if len(l) == 0 {
		out = own(m)
	} else if c, ok := child(m, l[0]); ok {
		out = s.allowed(c, l[1:], depth+1)
	}
	if ref, ok := m["$ref"].(string); ok {
		if r, ok := s.resolve(ref); ok {
			out = intersect(out, s.allowed(r, l, depth+1))
		}
	}
	if all, ok := m["allOf"].([]any); ok {
		for _, x := range all {
			out = intersect(out, s.allowed(x, l, depth+1))
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, ok := m[k].([]any)
		if !ok || len(alts) == 0 {
			continue
		}
		u := types{}
		for _, x := range alts {
			u = union(u, s.allowed(x, l, depth+1))
		}
		out = intersect(out, u)
	}
	return out
}

// own is the types a schema node allows itself: its type, enum, const.
func own(m map[string]any) types {
	var out types
	switch t := m["type"].(type) {
	case string:
		out = types{t: true}
	case []any:
		out = types{}
		for _, x := range t {
			if s, ok := x.(string); ok {
				out[s] = true
			}
		}
	}
	var vals []any
	if e, ok := m["enum"].([]any); ok {
		vals = e
	}
	if c, ok := m["const"]; ok {
		vals = append(vals, c)
	}
	if len(vals) > 0 {
		vt := types{}
		for _, v := range vals {
			vt[jsonTypeOf(v)] = true
		}
		out = intersect(out, vt)
	}
	return out
}

// jsonTypeOf names the JSON type of a decoded value.
func jsonTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "null"
}

// child is the schema that applies to the member or item st of a value
// of schema m, if m says.
func child(m map[string]any, st step) (any, bool) {
	if st.index < 0 {
		if p, ok := m["properties"].(map[string]any); ok {
			if c, ok := p[st.key]; ok {
				return c, true
			}
		}
		if a, ok := m["additionalProperties"]; ok {
			return a, true
		}
		return nil, false
	}
	if p, ok := m["prefixItems"].([]any); ok && st.index < len(p) {
		return p[st.index], true
	}
	switch it := m["items"].(type) {
	case []any: // draft-07's tuple
		if st.index < len(it) {
			return it[st.index], true
		}
		if a, ok := m["additionalItems"]; ok {
			return a, true
		}
		return nil, false
	case nil:
		return nil, false
	default:
		return it, true
	}
}

// resolve finds a local $ref ("#", "#/$defs/x", "#/definitions/x", any
// JSON Pointer into the document); others are not followed.
func (s *Schema) resolve(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	node := s.doc
	p := strings.TrimPrefix(ref, "#")
	if p == "" {
		return node, true
	}
	if !strings.HasPrefix(p, "/") {
		return nil, false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := node.(type) {
		case map[string]any:
			c, ok := x[tok]
			if !ok {
				return nil, false
			}
			node = c
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			node = x[i]
		default:
			return nil, false
		}
	}
	return node, true
}
