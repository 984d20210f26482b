package divert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	// gjson is the pointer's reading of the shape of a stored output: a
	// gjson.Result is a typed view of raw JSON with ForEach, which the
	// sketch, the grouping field and the suggested fields walk over the
	// first few records. Its walking of big containers is not used:
	// members and elements skip values with internal/jsonscan (and the
	// container ends Save recorded), never parsing them.
	"github.com/tidwall/gjson"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// Pointer is what the model receives instead of a diverted output.
type Pointer struct {
	Server, Tool string
	Stored       Stored
	Tokens       int  // tokens of the output as the model would have seen it
	Estimated    bool // Tokens extrapolated from a prefix; exact count still running
	Threshold    int
	// OverBudget: diverted because it did not fit the agent's context
	// budget (Threshold is then the budget left plus one).
	OverBudget bool
	// Asked: stored because the call asked for it, whatever its size.
	Asked   bool
	Secrets Secrets // what redaction found in the output (as stored)
}

// Secrets is what redaction found in an output before it was stored:
// counts by kind of the secrets masked (or, Kept, left as they are:
// [redaction] mode = "flag"), or why it was not scanned.
type Secrets struct {
	Counts    map[string]int
	Total     int
	Kept      bool
	Unscanned string
	// Where, when set (Kept), names the places of the secrets in the
	// stored file, read back from it ("github-pat on line 3; …").
	Where func(stored io.Reader) string

	places string // what Where said
}

// line is the pointer's line about them, "" when there is nothing to say.
func (s Secrets) line() string {
	if s.Unscanned != "" {
		return "secrets: not scanned (" + s.Unscanned + "); credentials in it are stored as they came\n"
	}
	if s.Total == 0 {
		return ""
	}
	kinds := redact.CountsText(s.Counts)
	if s.Kept {
		if s.places != "" {
			return fmt.Sprintf("secrets: %d kept as they are ([redaction] mode = \"flag\"): %s; %s\n", s.Total, kinds, s.places)
		}
		return fmt.Sprintf("secrets: %d kept as they are ([redaction] mode = \"flag\"): %s; grep the file for them before sharing it\n", s.Total, kinds)
	}
	return fmt.Sprintf("secrets: %d masked before it was stored (%s), each as [REDACTED:kind:fingerprint]\n", s.Total, kinds)
}

// sketch limits keep the pointer near 400 tokens whatever the data.
const (
	maxSketchKeys   = 12
	maxItemKeys     = 10
	maxSketchDepth  = 2
	sketchItemProbe = 20 // items whose keys are unioned for item keys
)

// Text renders the pointer: one header, the shape, ready-to-run calls.
func (p Pointer) Text(data []byte) string {
	var b strings.Builder
	approx := ""
	if p.Estimated {
		approx = "~"
	}
	switch {
	case p.Asked:
		fmt.Fprintf(&b, "Output of %s/%s was stored, as the call asked: %s%s tokens kept out of your context.\n",
			p.Server, p.Tool, approx, commas(p.Tokens))
	case p.OverBudget:
		fmt.Fprintf(&b, "Output of %s/%s was diverted to the scratchpad: %s%s tokens would have entered your context, which has %s left in its budget.\n",
			p.Server, p.Tool, approx, commas(p.Tokens), commas(p.Threshold-1))
	default:
		fmt.Fprintf(&b, "Output of %s/%s was diverted to the scratchpad: %s%s tokens (threshold %s) would have entered your context.\n",
			p.Server, p.Tool, approx, commas(p.Tokens), commas(p.Threshold))
	}
	fmt.Fprintf(&b, "file: %s\nformat: %s, %s lines, %s bytes\n", p.Stored.Name, p.Stored.Format, commas(p.Stored.Lines), commas(p.Stored.Bytes))
	b.WriteString(p.Secrets.line())
	shape, calls, path := describeAll(p.Stored, data)
	if shape != "" {
		fmt.Fprintf(&b, "shape: %s\n", shape)
	}
	b.WriteString("explore it with (ready to run):\n")
	for _, c := range calls {
		fmt.Fprintf(&b, "- %s\n", c)
	}
	fmt.Fprintf(&b, "or pass it (or a path of it) to another tool as an argument, unread: %s\n", referenceExample(p.Stored.Name, path))
	return strings.TrimRight(b.String(), "\n")
}

// referenceExample is a reference to the stored output file, or to the
// value at path in it (package reference resolves it in a tool call's
// arguments): {"$scratchpad":{"file":…,"path":…}}.
func referenceExample(file, path string) string {
	f, _ := json.Marshal(file)
	if path == "" {
		return fmt.Sprintf(`{"$scratchpad":{"file":%s}}`, f)
	}
	pj, _ := json.Marshal(path)
	return fmt.Sprintf(`{"$scratchpad":{"file":%s,"path":%s}}`, f, pj)
}

// describe computes a compact structural sketch and two or three calls
// built from the actual data.
func describe(st Stored, data []byte) (string, []string) {
	shape, calls, _ := describeAll(st, data)
	return shape, calls
}

// describeAll is describe and the path of the largest array of a JSON
// output ("" for others), the part a reference most likely passes on.
func describeAll(st Stored, data []byte) (string, []string, string) {
	file := st.Name
	// call renders a ready-to-run call with its arguments in the order a
	// person reads them: file first, then as given.
	call := func(tool string, args ...any) string {
		var b strings.Builder
		b.WriteString(tool + ` {"file":`)
		f, _ := json.Marshal(file)
		b.Write(f)
		for i := 0; i+1 < len(args); i += 2 {
			k, _ := json.Marshal(args[i].(string))
			v, _ := json.Marshal(args[i+1])
			b.WriteByte(',')
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		return b.String()
	}
	switch st.Format {
	case FormatJSON:
		// A string view, not a copy, of an output that may be 100 MB.
		t := bytes.TrimSpace(data)
		root := gjson.Parse(unsafe.String(unsafe.SliceData(t), len(t)))
		lengths := st.lengths
		if lengths == nil {
			lengths = arrayLengths{}
		}
		doc := unsafe.String(unsafe.SliceData(t), len(t))
		shape := sketchIn(doc, st.ends, root, 0, lengths)
		path, arr := largestArray(doc, st.ends, root, lengths)
		var calls []string
		if arr.Exists() {
			n := lengths.of(arr)
			fields := pickFields(arr)
			limit := 20
			if n < limit {
				limit = n
			}
			if len(fields) > 0 {
				calls = append(calls, call(explore.ToolIterateOver, "path", path, "fields", strings.Join(fields, ","), "limit", limit))
			}
			g := groupField(arr)
			if k := treeKey(arr); k != "" {
				// A tree: its entries nest under k at every depth, which a
				// descendant path reaches (the top ones and all below).
				nested := "$..[?@" + memberPath(k) + "]"
				if g != "" {
					calls = append(calls, call(explore.ToolCountBy, "path", "$..[?@"+fieldPath(g)+"]", "group_by", g))
				} else {
					calls = append(calls, call(explore.ToolCountBy, "path", nested))
				}
				if len(fields) > 0 {
					calls = append(calls, call(explore.ToolIterateOver, "path", nested, "fields", strings.Join(fields, ","), "limit", 20))
				}
			} else if g != "" {
				calls = append(calls, call(explore.ToolCountBy, "path", path, "group_by", g))
			}
			calls = append(calls, call(explore.ToolItemSchema, "path", path, "limit", 100))
			calls = append(calls, call(explore.ToolGetIn, "path", path+"[0]"))
		} else {
			calls = append(calls, call(explore.ToolSchema))
			if root.IsObject() {
				var first string
				members(doc, st.ends, root, func(k string, _ gjson.Result) bool { first = k; return false })
				if first != "" {
					calls = append(calls, call(explore.ToolGetIn, "path", "$"+memberPath(first)))
				}
			}
		}
		ref := ""
		if arr.Exists() && path != "$" {
			ref = path
		}
		return shape, limitCalls(calls), ref
	case FormatNDJSON:
		var first []byte
		lines := 0
		for rest := data; len(rest) > 0; {
			l := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				l, rest = rest[:i], rest[i+1:]
			} else {
				rest = nil
			}
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			if first == nil {
				first = l
			}
			lines++
		}
		rec := gjson.ParseBytes(first)
		shape := fmt.Sprintf("%d records, each %s", lines, sketch(rec, 1, arrayLengths{}))
		var calls []string
		if f := itemFields(rec); len(f) > 0 {
			calls = append(calls, call(explore.ToolIterateOver, "path", "$", "fields", strings.Join(f, ","), "limit", 20))
		}
		if g := groupField(firstRecords(data, groupProbe)); g != "" {
			calls = append(calls, call(explore.ToolCountBy, "path", "$", "group_by", g))
		}
		calls = append(calls, call(explore.ToolItemSchema, "path", "$", "limit", 100), call(explore.ToolHead, "lines", 20))
		return shape, limitCalls(calls), ""
	case FormatMarkdown:
		var heads []string
		for _, l := range strings.SplitN(string(data[:min(len(data), 1<<20)]), "\n", 2000) {
			if strings.HasPrefix(l, "#") && len(heads) < 8 {
				heads = append(heads, strings.TrimSpace(l))
			}
		}
		shape := ""
		if len(heads) > 0 {
			shape = "headings: " + truncate(strings.Join(heads, " · "), 400)
		}
		return shape, []string{call(explore.ToolSchema), call(explore.ToolHead, "lines", 40), call(explore.ToolGrep, "pattern", firstWord(heads))}, ""
	default:
		return "", []string{call(explore.ToolHead, "lines", 40), call(explore.ToolSchema), call(explore.ToolGrep, "pattern", "(?i)error|fail|warn")}, ""
	}
}

// groupProbe is how many items groupField looks at.
const groupProbe = 200

// tellingNames are the field names whose values are categories worth
// counting, most telling first.
var tellingNames = []string{"phase", "status", "state", "level", "severity", "conclusion", "outcome", "result", "reason",
	"kind", "type", "category", "language", "namespace", "region", "zone", "env", "environment", "priority"}

// groupField picks the listing's most telling low-cardinality field for a
// ready-to-run count_by: among the scalar fields (two levels deep) of the
// first items, one with 2 to 12 distinct values that most items have,
// preferring status-, level- and kind-like names, then fewer values. ""
// when nothing fits (too few items, only unique values).
func groupField(arr gjson.Result) string {
	distinct := map[string]map[string]bool{}
	seen := map[string]int{}
	var order []string
	n := 0
	var walk func(prefix string, obj gjson.Result, depth int)
	walk = func(prefix string, obj gjson.Result, depth int) {
		obj.ForEach(func(k, v gjson.Result) bool {
			key := k.String()
			if pathKey(key) != key || key == "" {
				return true // needs quoting: not worth suggesting
			}
			p := prefix + key
			switch {
			case v.IsObject():
				if depth < 1 {
					walk(p+".", v, depth+1)
				}
			case v.IsArray():
			case v.Type == gjson.String || v.Type == gjson.True || v.Type == gjson.False || v.Type == gjson.Number && telling(key) >= 0:
				if distinct[p] == nil {
					distinct[p] = map[string]bool{}
					order = append(order, p)
				}
				if len(distinct[p]) <= 12 {
					distinct[p][v.Raw] = true
				}
				seen[p]++
			}
			return true
		})
	}
	arr.ForEach(func(_, item gjson.Result) bool {
		if item.IsObject() {
			walk("", item, 0)
			n++
		}
		return n < groupProbe
	})
	if n < 4 {
		return ""
	}
	best, bestScore := "", -1
	for _, p := range order {
		d := len(distinct[p])
		if d < 2 || d > 12 || seen[p]*2 < n || d*2 > n {
			continue
		}
		score := 100 - d
		if t := telling(p[strings.LastIndexByte(p, '.')+1:]); t >= 0 {
			score += 1000 * (len(tellingNames) - t)
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	return best
}

// telling ranks a field name in tellingNames (-1: not there).
func telling(name string) int {
	name = strings.ToLower(name)
	for i, t := range tellingNames {
		if name == t {
			return i
		}
	}
	return -1
}

// firstRecords returns the first n NDJSON records as one JSON array.
func firstRecords(data []byte, n int) gjson.Result {
	var b bytes.Buffer
	b.WriteByte('[')
	k := 0
	for _, l := range bytes.SplitN(data, []byte{'\n'}, n+1) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 || !jsonscan.Valid(l) {
			continue
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.Write(l)
		if k++; k == n {
			break
		}
	}
	b.WriteByte(']')
	return gjson.ParseBytes(b.Bytes())
}

func firstWord(heads []string) string {
	for _, h := range heads {
		if w := strings.Fields(strings.TrimLeft(h, "# ")); len(w) > 0 {
			return w[0]
		}
	}
	return "TODO|FIXME"
}

func limitCalls(c []string) []string {
	if len(c) > 3 {
		return c[:3]
	}
	return c
}

// sketch renders a value's shape to depth maxSketchDepth: objects as
// {key: type, …}, arrays as array[n] of <first item's shape>.
func sketch(v gjson.Result, depth int, lengths arrayLengths) string {
	return sketchIn("", nil, v, depth, lengths)
}

func sketchIn(doc string, ends containerEnds, v gjson.Result, depth int, lengths arrayLengths) string {
	switch {
	case v.IsObject():
		if depth >= maxSketchDepth {
			return "object"
		}
		var parts []string
		n := 0
		members(doc, ends, v, func(k string, val gjson.Result) bool {
			n++
			if len(parts) < maxSketchKeys {
				parts = append(parts, k+": "+sketchIn(doc, ends, val, depth+1, lengths))
			}
			return true
		})
		if n > len(parts) {
			parts = append(parts, fmt.Sprintf("… %d more keys", n-len(parts)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case v.IsArray():
		n := lengths.of(v)
		if n == 0 {
			return "array[0]"
		}
		first := v.Get("0")
		if first.IsObject() {
			keys := itemKeys(v)
			more := ""
			if len(keys) > maxItemKeys {
				more = ", …"
				keys = keys[:maxItemKeys]
			}
			return fmt.Sprintf("array[%d] of objects {%s%s}", n, strings.Join(keys, ", "), more)
		}
		return fmt.Sprintf("array[%d] of %s", n, typeName(first))
	default:
		return typeName(v)
	}
}

func typeName(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return "string"
	case gjson.Number:
		return "number"
	case gjson.True, gjson.False:
		return "boolean"
	case gjson.Null:
		return "null"
	}
	if v.IsArray() {
		return "array"
	}
	return "object"
}

// arrayLengths remembers array lengths by position in the output:
// counting a 100,000-item array walks all of it, and the sketch, the
// largest-array search and the suggestions all need the same lengths.
// Save fills it while it writes, with where each container ends, so that
// going over an object's members skips a big value at once.
type arrayLengths map[int]int

func (l arrayLengths) of(arr gjson.Result) int {
	if n, ok := l[arr.Index]; ok {
		return n
	}
	n := count(arr)
	l[arr.Index] = n
	return n
}

// containerEnds maps a container's offset to the offset just past it.
type containerEnds map[int]int

// members calls fn for each member of object v, which is at v.Index in
// doc (or, when doc does not hold it there, is v.Raw), in order, until fn
// returns false. A member's value is found by skipping it, at once for a
// container whose end ends knows (may be nil), else by scanning (strings by
// byte search): never parsed, and a string value is not unescaped (its Str
// is empty).
func members(doc string, ends containerEnds, v gjson.Result, fn func(k string, val gjson.Result) bool) {
	if !v.IsObject() {
		return
	}
	base := v.Index
	if base < 0 || base+len(v.Raw) > len(doc) || doc[base:base+len(v.Raw)] != v.Raw {
		doc, base = v.Raw, 0
	}
	t := asBytes(doc[base : base+len(v.Raw)])
	jsonscan.Object(t, 0, func(ks, ke, at int) int {
		var end int
		if c := t[at]; (c == '{' || c == '[') && ends != nil {
			if e, ok := ends[base+at]; ok {
				end = e - base
			}
		}
		if end == 0 {
			end = jsonscan.ValueEnd(t, at)
		}
		if !fn(jsonscan.Unquote(t[ks:ke]), rawResult(doc, base+at, base+end)) {
			return -1
		}
		return end
	})
}

// rawResult is the value doc[s:e] as a gjson view: strings and containers
// typed by their first byte, not unescaped or parsed; a number or literal
// parsed (a few bytes), for its type.
func rawResult(doc string, s, e int) gjson.Result {
	var r gjson.Result
	switch doc[s] {
	case '"':
		r = gjson.Result{Type: gjson.String, Raw: doc[s:e]}
	case '{', '[':
		r = gjson.Result{Type: gjson.JSON, Raw: doc[s:e]}
	default:
		r = gjson.Parse(doc[s:e])
	}
	r.Index = s
	return r
}

// asBytes is a read-only view of s as bytes, for the jsonscan walkers.
func asBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// elements calls fn for each item of array v (as [members] does for an
// object's members) until it returns false.
func elements(v gjson.Result, fn func(val gjson.Result) bool) {
	if !v.IsArray() {
		return
	}
	t := asBytes(v.Raw)
	jsonscan.Array(t, 0, func(at int) int {
		end := jsonscan.ValueEnd(t, at)
		if !fn(rawResult(v.Raw, at, end)) {
			return -1
		}
		return end
	})
}

func count(arr gjson.Result) int {
	n := 0
	arr.ForEach(func(_, _ gjson.Result) bool { n++; return true })
	return n
}

// itemKeys is the union of keys over the first items, in first-seen order.
func itemKeys(arr gjson.Result) []string {
	seen := map[string]bool{}
	var keys []string
	i := 0
	arr.ForEach(func(_, item gjson.Result) bool {
		item.ForEach(func(k, _ gjson.Result) bool {
			if s := k.String(); !seen[s] {
				seen[s] = true
				keys = append(keys, s)
			}
			return true
		})
		i++
		return i < sketchItemProbe
	})
	return keys
}

// largestArray finds the longest array at the root or up to two object
// levels below it, the listing a model most likely wants to iterate.
func largestArray(doc string, ends containerEnds, root gjson.Result, lengths arrayLengths) (string, gjson.Result) {
	if root.IsArray() {
		return "$", root
	}
	bestPath, best, bestN := "", gjson.Result{}, -1
	var walk func(v gjson.Result, path string, depth int)
	walk = func(v gjson.Result, path string, depth int) {
		members(doc, ends, v, func(k string, val gjson.Result) bool {
			p := path + memberPath(k)
			if val.IsArray() {
				if n := lengths.of(val); n > bestN {
					bestPath, best, bestN = p, val, n
				}
			} else if val.IsObject() && depth < 2 {
				walk(val, p, depth+1)
			}
			return true
		})
	}
	walk(root, "$", 0)
	return bestPath, best
}

// memberPath is the JSONPath (RFC 9535) segment of a member: .name where
// a name may stand after a dot, ["…"] otherwise (kube-system, 1, a b).
func memberPath(k string) string {
	plain := k != ""
	for i, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		return "." + k
	}
	q, _ := json.Marshal(k)
	return "[" + string(q) + "]"
}

// fieldPath is memberPath of each key of a dotted field (status.phase).
func fieldPath(field string) string {
	var b strings.Builder
	for _, k := range strings.Split(field, ".") {
		b.WriteString(memberPath(k))
	}
	return b.String()
}

// treeKey is the key under which a listing's entries hold entries like
// themselves, at every depth (directory_tree's children): one of the
// first items' arrays has an object that has the key again. "" when
// there is none.
func treeKey(arr gjson.Result) string {
	found := ""
	n := 0
	arr.ForEach(func(_, item gjson.Result) bool {
		item.ForEach(func(k, v gjson.Result) bool {
			if !v.IsArray() {
				return true
			}
			i := 0
			v.ForEach(func(_, el gjson.Result) bool {
				if el.IsObject() && el.Get(gjson.Escape(k.String())).Exists() {
					found = k.String()
				}
				i++
				return found == "" && i < sketchItemProbe
			})
			return found == ""
		})
		n++
		return found == "" && n < sketchItemProbe
	})
	return found
}

func pathKey(k string) string {
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return strconv.Quote(k)
		}
	}
	return k
}

// pickFields chooses up to four fields worth listing per item: identifying
// ones first (id, name, metadata.name, title, …), then other scalars.
func pickFields(arr gjson.Result) []string {
	return itemFields(arr.Get("0"))
}

func itemFields(item gjson.Result) []string {
	if !item.IsObject() {
		return nil
	}
	preferred := []string{"id", "name", "metadata.name", "metadata.namespace", "title", "key", "status.phase", "status", "state", "type", "kind", "level", "message", "timestamp", "created_at"}
	var out []string
	for _, f := range preferred {
		v := item.Get(f)
		if v.Exists() && !v.IsObject() && !v.IsArray() {
			out = append(out, f)
		}
		if len(out) == 4 {
			return out
		}
	}
	var rest []string
	item.ForEach(func(k, v gjson.Result) bool {
		if !v.IsObject() && !v.IsArray() && !contains(out, k.String()) && !strings.ContainsAny(k.String(), ".,") {
			rest = append(rest, k.String())
		}
		return true
	})
	sort.SliceStable(rest, func(i, j int) bool { return len(rest[i]) < len(rest[j]) })
	for _, k := range rest {
		if len(out) == 4 {
			break
		}
		out = append(out, k)
	}
	return out
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// commas formats n with thousands separators: 81234 → "81,234".
func commas(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// truncate cuts s to n bytes, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
