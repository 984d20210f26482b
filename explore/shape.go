package explore

import (
	"fmt"
	"sort"
	"strings"
)

// shape accumulates, over a set of items, which dotted keys occur, with
// which types, and in how many items. It backs item_schema and the element
// summary of schema.
type shape struct {
	order  []string
	fields map[string]*fieldStat
	items  int  // items merged
	cut    bool // a nested array was sampled, not read whole
}

type fieldStat struct {
	types   map[string]int
	present int // items in which the key occurs
	last    int // last item counted in present
}

const (
	maxShapeDepth     = 8    // nesting below an item that is flattened
	maxNestedElements = 1000 // elements of a nested array merged per item
)

func newShape() *shape { return &shape{fields: map[string]*fieldStat{}} }

// add merges item number i; depth bounds how deep keys are flattened.
func (s *shape) add(d *doc, n node, i, depth int) {
	s.items++
	s.walk(d, n, "", i, min(depth, maxShapeDepth))
}

func (s *shape) record(key, typ string, item int) {
	f := s.fields[key]
	if f == nil {
		f = &fieldStat{types: map[string]int{}, last: -1}
		s.fields[key] = f
		s.order = append(s.order, key)
	}
	f.types[typ]++
	if f.last != item {
		f.present++
		f.last = item
	}
}

func (s *shape) walk(d *doc, n node, prefix string, item, depth int) {
	t := d.typeOf(n)
	if t == "string" {
		if _, ok := rawTextNumber(d.data[n.v.start:n.v.end]); ok {
			t = "string (numeric)" // a decimal number written as text (numtext.go)
		}
	}
	if prefix != "" {
		s.record(prefix, t, item)
	} else if t != "object" {
		s.record("(item)", t, item)
	}
	if depth <= 0 {
		return
	}
	switch t {
	case "object":
		for _, m := range d.members(n) {
			k := renderKey(keyString(d.data, m.key))
			if prefix == "" {
				k = strings.TrimPrefix(k, ".")
			}
			s.walk(d, node{v: m.val}, prefix+k, item, depth-1)
		}
	case "array":
		mem := d.members(n)
		if len(mem) > maxNestedElements {
			mem = mem[:maxNestedElements]
			s.cut = true
		}
		p := prefix + "[]"
		if prefix == "" {
			p = "(item)[]"
		}
		for _, m := range mem {
			s.walk(d, node{v: m.val}, p, item, depth-1)
		}
	}
}

// typesText renders "string" or "string 118, null 2".
func (f *fieldStat) typesText() string {
	if len(f.types) == 1 {
		for t := range f.types {
			return t
		}
	}
	ts := make([]string, 0, len(f.types))
	for t := range f.types {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		if f.types[ts[i]] != f.types[ts[j]] {
			return f.types[ts[i]] > f.types[ts[j]]
		}
		return ts[i] < ts[j]
	})
	for i, t := range ts {
		ts[i] = fmt.Sprintf("%s %s", t, Comma(f.types[t]))
	}
	return strings.Join(ts, ", ")
}

// table renders one row per key: key, types, "present/items".
func (s *shape) table(indent string) string {
	kw, tw := 3, 5
	for _, k := range s.order {
		kw = max(kw, len(k))
		tw = max(tw, len(s.fields[k].typesText()))
	}
	kw, tw = min(kw, 60), min(tw, 40)
	var b strings.Builder
	fmt.Fprintf(&b, "%s%-*s  %-*s  %s\n", indent, kw, "key", tw, "types", "present")
	for _, k := range s.order {
		f := s.fields[k]
		fmt.Fprintf(&b, "%s%-*s  %-*s  %s/%s\n", indent, kw, k, tw, f.typesText(), Comma(f.present), Comma(s.items))
	}
	return b.String()
}
