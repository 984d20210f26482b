package toolsearch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	// gjson reads the small input schemas by key, once per object, without
	// decoding them: internal/jsonscan walks big documents in one pass,
	// which a schema lookup is not.
	"github.com/tidwall/gjson"
)

// Limits of a signature, so that a hostile or merely huge schema still
// gives a short line.
const (
	maxEnum       = 4  // enum values shown before "|…"
	maxEnumLen    = 24 // bytes of one enum value shown
	maxNested     = 6  // properties of a nested object shown
	maxParams     = 40 // arguments shown by Signature
	maxNameLen    = 48 // bytes of an argument name shown
	maxAlternates = 3  // anyOf/oneOf/type-array alternatives shown
	maxLevel      = 4  // schemas nested within one argument's type
)

// param is one argument of a signature, rendered.
type param struct {
	text     string // "name?: type"
	required bool
}

// Signature renders the arguments of a JSON Schema for a tool's input as
// one short line: required arguments first, then the optional ones marked
// with "?", each in schema order, with its type:
//
//	owner: string, repo: string, state?: "open"|"closed"|"all", labels?: string[]
//
// Enums show at most four values then "|…"; arrays are "T[]"; an object
// with properties shows their names one level deep ("{path, body, line?}"),
// deeper ones are "object"; anyOf and oneOf join their alternatives with
// "|"; a schema with no type is "any". Past 40 arguments (optional ones
// going first), "…+N more" says how many are not shown. A schema with no
// properties, or one that is not valid JSON, gives "". Signature never
// panics, whatever the schema.
func Signature(schema json.RawMessage) string {
	ps := params(schema)
	return joinParams(ps, 0)
}

// params renders each argument of schema, required ones first.
func params(schema json.RawMessage) []param {
	if !usable(schema) {
		return nil
	}
	root := gjson.ParseBytes(schema)
	if !root.IsObject() {
		return nil
	}
	n := parseNode(root)
	return objectParams(&n, 0, maxParams)
}

// objectParams renders the properties of the object schema o, at most
// limit of them (an extra last param "…" says some were left out).
func objectParams(o *node, depth, limit int) []param {
	props := o.props
	if !props.IsObject() {
		return nil
	}
	req := map[string]bool{}
	o.required.ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String {
			req[v.Str] = true
		}
		return true
	})
	// Required arguments first, then optional ones while there is room,
	// so that an optional one is left out before any required one.
	var out []param
	total := 0
	for _, wantReq := range [...]bool{true, false} {
		props.ForEach(func(k, v gjson.Result) bool {
			r := req[k.String()]
			if r != wantReq {
				return true
			}
			total++
			if len(out) >= limit {
				return true // counted, not shown
			}
			var b strings.Builder
			b.WriteString(argName(k.String()))
			if !r {
				b.WriteByte('?')
			}
			if depth == 0 {
				b.WriteString(": ")
				b.WriteString(typeOf(v, depth, 0))
			}
			out = append(out, param{text: b.String(), required: r})
			return true
		})
	}
	if total > len(out) {
		out = append(out, param{text: moreText(total - len(out))})
	}
	return out
}

// node holds the keywords of one schema this package reads, found in one
// pass over the object (gjson's Get would scan it once per keyword). The
// first of a key given twice wins, as with Get.
type node struct {
	enum, cnst, typ, anyOf, oneOf, allOf, ref, props, items, required, desc, title gjson.Result
}

func parseNode(v gjson.Result) node {
	var n node
	v.ForEach(func(k, x gjson.Result) bool {
		var slot *gjson.Result
		switch k.Str {
		case "enum":
			slot = &n.enum
		case "const":
			slot = &n.cnst
		case "type":
			slot = &n.typ
		case "anyOf":
			slot = &n.anyOf
		case "oneOf":
			slot = &n.oneOf
		case "allOf":
			slot = &n.allOf
		case "$ref":
			slot = &n.ref
		case "properties":
			slot = &n.props
		case "items":
			slot = &n.items
		case "required":
			slot = &n.required
		case "description":
			slot = &n.desc
		case "title":
			slot = &n.title
		default:
			return true
		}
		if !slot.Exists() {
			*slot = x
		}
		return true
	})
	return n
}

// typeOf renders the type of schema v; depth 0 is an argument's own type,
// which may show a nested object's property names. level counts the
// schemas above v within the argument (alternatives, items): past
// maxLevel, a type is "…", so that one argument cannot render the whole
// of a hostile schema.
func typeOf(v gjson.Result, depth, level int) string {
	if level > maxLevel {
		return "…"
	}
	if !v.IsObject() {
		return "any" // true, or not a schema at all
	}
	n := parseNode(v)
	if n.enum.IsArray() && strings.TrimSpace(n.enum.Raw[1:len(n.enum.Raw)-1]) != "" {
		return enumText(n.enum)
	}
	if n.cnst.Exists() {
		return literal(n.cnst)
	}
	switch {
	case n.typ.Type == gjson.String:
		return namedType(&n, n.typ.Str, depth, level)
	case n.typ.IsArray():
		var alts []string
		n.typ.ForEach(func(_, x gjson.Result) bool {
			if x.Type == gjson.String && !contains(alts, x.Str) {
				alts = append(alts, x.Str)
			}
			return len(alts) < maxAlternates+1
		})
		if len(alts) == 1 {
			return namedType(&n, alts[0], depth, level)
		}
		if len(alts) > 0 {
			return joinAlts(alts)
		}
	}
	for _, a := range [...]gjson.Result{n.anyOf, n.oneOf} {
		if a.IsArray() {
			var alts []string
			a.ForEach(func(_, x gjson.Result) bool {
				if s := typeOf(x, depth+1, level+1); !contains(alts, s) {
					alts = append(alts, s)
				}
				return len(alts) < maxAlternates+1
			})
			if len(alts) > 0 {
				return joinAlts(alts)
			}
		}
	}
	if n.allOf.IsArray() {
		var first gjson.Result
		n.allOf.ForEach(func(_, x gjson.Result) bool { first = x; return false })
		if first.Exists() {
			return typeOf(first, depth+1, level+1)
		}
	}
	if n.ref.Type == gjson.String {
		ref := n.ref.Str
		if i := strings.LastIndexByte(ref, '/'); i >= 0 {
			ref = ref[i+1:]
		}
		if ref = argName(ref); ref != "" {
			return ref
		}
		return "object"
	}
	if n.props.IsObject() {
		return namedType(&n, "object", depth, level)
	}
	if n.items.Exists() {
		return namedType(&n, "array", depth, level)
	}
	return "any"
}

// namedType renders a schema of JSON Schema type name.
func namedType(n *node, name string, depth, level int) string {
	switch name {
	case "array":
		if !n.items.Exists() || n.items.IsArray() { // none, or the tuple form
			return "array"
		}
		it := typeOf(n.items, depth, level+1)
		if strings.Contains(it, "|") {
			it = "(" + it + ")"
		}
		return it + "[]"
	case "object":
		if depth > 0 || !n.props.IsObject() {
			return "object"
		}
		ps := objectParams(n, 1, maxNested)
		if len(ps) == 0 {
			return "object"
		}
		return "{" + joinParams(ps, 0) + "}"
	}
	return argName(name)
}

func joinAlts(alts []string) string {
	if len(alts) > maxAlternates {
		alts = append(alts[:maxAlternates:maxAlternates], "…")
	}
	return strings.Join(alts, "|")
}

// enumText renders an enum's first values: `"open"|"closed"|"all"`.
func enumText(e gjson.Result) string {
	var b strings.Builder
	n := 0
	e.ForEach(func(_, x gjson.Result) bool {
		if n == maxEnum {
			b.WriteString("|…")
			return false
		}
		if n > 0 {
			b.WriteByte('|')
		}
		b.WriteString(literal(x))
		n++
		return true
	})
	return b.String()
}

// literal renders a JSON value of an enum or const: strings quoted and cut
// to maxEnumLen, numbers and booleans as they are, anything else "…".
func literal(x gjson.Result) string {
	switch x.Type {
	case gjson.String:
		return quote(clip(x.Str, maxEnumLen))
	case gjson.Number, gjson.True, gjson.False, gjson.Null:
		return clip(x.Raw, maxEnumLen)
	}
	return "…"
}

// argName makes an argument or type name safe to print on one line: a
// plain name is kept; one with spaces, quotes or control characters is
// quoted as JSON; a long one is cut.
func argName(s string) string {
	s = clip(s, maxNameLen)
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r == '$' || r == '@' || r == '/' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return quote(s)
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// quote is s as a JSON string with every control character escaped
// (encoding/json leaves DEL and the C1 controls as they are).
func quote(s string) string {
	q, _ := json.Marshal(s)
	if !strings.ContainsFunc(string(q), unicode.IsControl) {
		return string(q)
	}
	var b strings.Builder
	for _, r := range string(q) {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// joinParams joins rendered params with ", ". With budget > 0, optional
// ones are left out once the line would pass budget bytes (required ones
// always stay), and "…+N" says how many were.
func joinParams(ps []param, budget int) string {
	var b strings.Builder
	left := 0
	for i, p := range ps {
		if budget > 0 && !p.required && b.Len()+len(p.text) > budget {
			left = len(ps) - i
			if last := ps[len(ps)-1].text; strings.HasPrefix(last, "…+") {
				n, _ := strconv.Atoi(strings.TrimSuffix(last[len("…+"):], " more"))
				left += n - 1
			}
			break
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.text)
	}
	if left > 0 {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(moreText(left))
	}
	return b.String()
}

// moreText says how many arguments a signature left out.
func moreText(n int) string { return "…+" + strconv.Itoa(n) + " more" }

// maxDepth is the deepest nesting of a schema this package reads. Real
// schemas nest a few levels; gjson, which reads them, recurses once per
// level, and a hostile schema nested a million deep would take it past
// the goroutine stack limit, which is fatal, not a panic.
const maxDepth = 64

// usable reports whether schema is valid JSON nested at most maxDepth
// deep: jsonscan checks it without recursion, so gjson only ever sees a
// shallow document.
func usable(schema []byte) bool { return jsonscan.ValidDepth(schema, maxDepth) }
