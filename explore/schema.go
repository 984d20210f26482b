package explore

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

const (
	maxSchemaKeys     = 50    // keys listed per object
	maxSchemaElements = 1000  // array elements merged into the element summary
	maxCSVTypeRows    = 10000 // CSV rows whose values decide column types
	maxShapeLines     = 200000
	maxSchemaDepth    = 32 // max_depth above this is treated as this
)

func runSchema(c *call, a schemaArgs) *tool.Result {
	depth := a.MaxDepth
	// Deeper trees are unreadable anyway, and indenting them is quadratic.
	depth = min(depth, maxSchemaDepth)
	d, res := c.load()
	if res != nil {
		return res
	}
	var body, what string
	switch d.kind {
	case kindJSON:
		if d.jsonErr != "" {
			// Still useful as text; say where the JSON breaks.
			body = "not valid JSON: " + d.jsonErr + "\n" + textSchema(d)
			what = fmt.Sprintf("%s (broken JSON, read as text, %s)", c.file, plural(d.lineCount(), "line"))
			break
		}
		var b strings.Builder
		b.WriteString("(line ranges are inclusive: pass them to slice as start/end)\n")
		jsonSchema(&b, d, d.root(), "$", "", depth)
		body = b.String()
		what = fmt.Sprintf("%s (JSON, %s, max_depth %d)", c.file, plural(d.lineCount(), "line"), depth)
	case kindNDJSON:
		body = ndjsonSchema(d, depth)
		what = fmt.Sprintf("%s (NDJSON, %s, max_depth %d)", c.file, plural(len(d.records), "record"), depth)
	case kindMarkdown:
		var n int
		body, n = markdownSchema(d, depth)
		what = fmt.Sprintf("%s (Markdown, %s, %s, levels 1-%d)", c.file, plural(d.lineCount(), "line"), plural(n, "heading"), min(depth, 6))
	case kindCSV, kindTSV:
		body = csvSchema(d)
		what = fmt.Sprintf("%s (%s, %s)", c.file, d.kind, plural(d.lineCount(), "line"))
	default:
		body = textSchema(d)
		what = fmt.Sprintf("%s (text, %s)", c.file, plural(d.lineCount(), "line"))
	}
	return c.finish(body, what, func() []suggestion {
		f := kv{"file", c.file}
		var s []suggestion
		if depth > 1 {
			s = append(s, suggest("schema", "a shallower tree", f, kv{"max_depth", max(1, depth/2)}))
		}
		return append(s, suggest("head", "the first lines", f, kv{"lines", 30}))
	})
}

func jsonSchema(b *strings.Builder, d *doc, n node, label, indent string, depth int) {
	a, z := d.lineRange(n)
	t := d.typeOf(n)
	desc := describe(d, n)
	if t != "object" && t != "array" {
		desc += " " + preview(d.data[n.v.start:n.v.end], 40)
	}
	fmt.Fprintf(b, "%s%s: %s (%s)\n", indent, label, desc, linesText(a, z))
	if depth <= 1 {
		return
	}
	switch t {
	case "object":
		mem := d.members(n)
		for i, m := range mem {
			if i == maxSchemaKeys {
				fmt.Fprintf(b, "%s  … %s more keys (get_in %s with offset %d, limit 50 lists them)\n", indent, Comma(len(mem)-i), label, i)
				break
			}
			jsonSchema(b, d, node{v: m.val}, renderKey(keyString(d.data, m.key)), indent+"  ", depth-1)
		}
	case "array":
		ln := d.length(n)
		if ln == 0 {
			return
		}
		s := newShape()
		k := min(ln, maxSchemaElements)
		for i := 0; i < k; i++ {
			s.add(d, d.elem(n, i), i, depth-1)
		}
		note := "all " + plural(ln, "item")
		if k < ln {
			note = fmt.Sprintf("first %s of %s items", Comma(k), Comma(ln))
		}
		fmt.Fprintf(b, "%s  [*]: items (%s)\n", indent, note)
		b.WriteString(s.table(indent + "    "))
	}
}

func ndjsonSchema(d *doc, depth int) string {
	var b strings.Builder
	a, z := d.lineRange(node{records: true})
	fmt.Fprintf(&b, "$: NDJSON, %s (%s); address records as $[i]\n", plural(len(d.records), "record"), linesText(a, z))
	if len(d.badRecs) > 0 {
		fmt.Fprintf(&b, "  %s not valid JSON (first on line %d)\n", plural(len(d.badRecs), "record is"), d.lineOf(d.records[d.badRecs[0]].start))
	}
	s := newShape()
	k := min(len(d.records), maxSchemaElements)
	for i := 0; i < k; i++ {
		if !d.badRecord(i) {
			s.add(d, node{v: d.records[i]}, i, depth-1)
		}
	}
	note := "all records"
	if k < len(d.records) {
		note = fmt.Sprintf("union of the first %s records", Comma(k))
	}
	fmt.Fprintf(&b, "  [*]: %s\n", note)
	b.WriteString(s.table("    "))
	return b.String()
}

// markdownSchema lists ATX headings (outside fenced code) up to level
// depth, each with the line range of its section.
func markdownSchema(d *doc, depth int) (string, int) {
	type heading struct {
		level, line int
		text        string
	}
	var hs []heading
	fence := ""
	for n := 1; n <= d.lineCount(); n++ {
		l := strings.TrimRight(string(d.line(n)), " \t")
		t := strings.TrimLeft(l, " ")
		if len(l)-len(t) > 3 {
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			switch {
			case fence == "":
				fence = t[:3]
			case strings.HasPrefix(t, fence):
				fence = ""
			}
			continue
		}
		if fence != "" || !strings.HasPrefix(t, "#") {
			continue
		}
		lv := len(t) - len(strings.TrimLeft(t, "#"))
		if lv > 6 || (len(t) > lv && t[lv] != ' ' && t[lv] != '\t') {
			continue
		}
		hs = append(hs, heading{lv, n, strings.TrimSpace(strings.TrimRight(t[lv:], "#"))})
	}
	var b strings.Builder
	shown := 0
	for i, h := range hs {
		if h.level > depth {
			continue
		}
		end := d.lineCount()
		for _, h2 := range hs[i+1:] {
			if h2.level <= h.level {
				end = h2.line - 1
				break
			}
		}
		fmt.Fprintf(&b, "%s%s %s (%s)\n", strings.Repeat("  ", h.level-1), strings.Repeat("#", h.level), h.text, linesText(h.line, end))
		shown++
	}
	if len(hs) == 0 {
		b.WriteString("(no headings)\n")
		b.WriteString(textSchema(d))
	}
	return b.String(), shown
}

func csvSchema(d *doc) string {
	r := csv.NewReader(bytes.NewReader(d.data))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	if d.kind == kindTSV {
		r.Comma = '\t'
	}
	header, err := r.Read()
	if err != nil {
		return "(empty or unreadable: " + err.Error() + ")\n"
	}
	header = append([]string(nil), header...)
	type col struct {
		kinds   map[string]int
		empty   int
		example string
	}
	cols := make([]col, len(header))
	for i := range cols {
		cols[i].kinds = map[string]int{}
	}
	rows, ragged := 0, 0
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				continue
			}
			break
		}
		rows++
		if len(rec) != len(header) {
			ragged++
		}
		if rows > maxCSVTypeRows {
			continue
		}
		for i := 0; i < len(rec) && i < len(cols); i++ {
			v := strings.TrimSpace(rec[i])
			if v == "" {
				cols[i].empty++
				continue
			}
			cols[i].kinds[cellKind(v)]++
			if cols[i].example == "" {
				cols[i].example = preview([]byte(v), 40)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s after the header row (line 1)", plural(len(header), "column"), plural(rows, "row"))
	if rows > maxCSVTypeRows {
		fmt.Fprintf(&b, "; types from the first %s rows", Comma(maxCSVTypeRows))
	}
	if ragged > 0 {
		fmt.Fprintf(&b, "; %s with a different column count", plural(ragged, "row"))
	}
	b.WriteString("\n")
	for i, h := range header {
		c := cols[i]
		fmt.Fprintf(&b, "%3d. %s: %s", i+1, h, columnType(c.kinds))
		if c.empty > 0 {
			fmt.Fprintf(&b, ", %s empty", Comma(c.empty))
		}
		if c.example != "" {
			fmt.Fprintf(&b, ", e.g. %q", c.example)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func cellKind(v string) string {
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return "integer"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return "number"
	}
	switch strings.ToLower(v) {
	case "true", "false":
		return "boolean"
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", time.DateOnly} {
		if _, err := time.Parse(layout, v); err == nil {
			return "datetime"
		}
	}
	return "string"
}

func columnType(kinds map[string]int) string {
	switch {
	case len(kinds) == 0:
		return "empty"
	case len(kinds) == 1:
		for k := range kinds {
			return k
		}
	case len(kinds) == 2 && kinds["integer"] > 0 && kinds["number"] > 0:
		return "number"
	}
	ks := sortedKeys(kinds)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %s", k, Comma(kinds[k]))
	}
	return "mixed (" + strings.Join(parts, ", ") + ")"
}

// textSchema summarises a text file: size, longest lines, and the most
// frequent line shapes (digit runs collapsed to #) with an example line.
func textSchema(d *doc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "text: %s, %s bytes\n", plural(d.lineCount(), "line"), Comma(len(d.data)))
	if d.lineCount() == 0 {
		return b.String()
	}
	type ll struct{ n, len int }
	var longest []ll
	type sh struct {
		count, first int
	}
	shapes := map[string]*sh{}
	scanned := min(d.lineCount(), maxShapeLines)
	for n := 1; n <= d.lineCount(); n++ {
		l := d.line(n)
		if len(longest) < 5 || len(l) > longest[len(longest)-1].len {
			longest = append(longest, ll{n, len(l)})
			sort.SliceStable(longest, func(i, j int) bool { return longest[i].len > longest[j].len })
			if len(longest) > 5 {
				longest = longest[:5]
			}
		}
		if n <= scanned {
			k := lineShape(l)
			if s := shapes[k]; s != nil {
				s.count++
			} else if len(shapes) < 100000 {
				shapes[k] = &sh{1, n}
			}
		}
	}
	b.WriteString("longest lines: ")
	for i, x := range longest {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "line %d (%s bytes)", x.n, Comma(x.len))
	}
	b.WriteString("\n")
	keys := make([]string, 0, len(shapes))
	for k := range shapes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, z := shapes[keys[i]], shapes[keys[j]]
		if a.count != z.count {
			return a.count > z.count
		}
		return a.first < z.first
	})
	fmt.Fprintf(&b, "%s distinct line shapes", Comma(len(shapes)))
	if scanned < d.lineCount() {
		fmt.Fprintf(&b, " in the first %s lines", Comma(scanned))
	}
	b.WriteString(" (digits as #); most common, with the first line of each:\n")
	for i, k := range keys {
		if i == 10 {
			break
		}
		s := shapes[k]
		fmt.Fprintf(&b, "  %sx line %d: %s\n", Comma(s.count), s.first, clipAround(d.line(s.first), 0, 120))
	}
	return b.String()
}

func lineShape(l []byte) string {
	if len(l) > 80 {
		l = l[:80]
	}
	var b strings.Builder
	inDigits := false
	for _, c := range l {
		if c >= '0' && c <= '9' {
			if !inDigits {
				b.WriteByte('#')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteByte(c)
	}
	return b.String()
}
