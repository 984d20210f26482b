package explore

import (
	"sort"
	"strconv"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// node is a JSON value in a doc: a byte span, or the virtual array of an
// NDJSON file's records.
type node struct {
	v       span
	records bool
}

// bigContainer is the size from which a container's member list is kept in
// the doc, so that item 400,000 of a 100 MB listing is one slice index away
// on the second call.
const bigContainer = 64 << 10

func (d *doc) root() node {
	if d.kind == kindNDJSON {
		return node{records: true}
	}
	// The file was validated on load, so the root value ends at the last
	// non-space byte: no need to scan 100 MB to find it.
	s := jsonscan.SkipSpace(d.data, 0)
	e := len(d.data)
	for e > s && (d.data[e-1] == ' ' || d.data[e-1] == '\n' || d.data[e-1] == '\r' || d.data[e-1] == '\t') {
		e--
	}
	return node{v: span{s, e}}
}

func (d *doc) typeOf(n node) string {
	if n.records {
		return "array"
	}
	return jsonType(d.data, n.v.start)
}

// members lists a container's members; nil for scalars and the NDJSON root.
func (d *doc) members(n node) []child {
	if n.records {
		return nil
	}
	t := d.typeOf(n)
	if t != "object" && t != "array" {
		return nil
	}
	if n.v.end-n.v.start < bigContainer {
		return scanChildren(d.data, n.v)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if k, ok := d.kids[n.v.start]; ok {
		return k
	}
	k := scanChildren(d.data, n.v)
	if d.kids == nil {
		d.kids = map[int][]child{}
	}
	d.kids[n.v.start] = k
	d.extra.Add(int64(cap(k)) * 32)
	return k
}

// length is the element count of an array (or member count of an object).
func (d *doc) length(n node) int {
	if n.records {
		return len(d.records)
	}
	return len(d.members(n))
}

// elem returns element i of an array node (0 <= i < length).
func (d *doc) elem(n node, i int) node {
	if n.records {
		return node{v: d.records[i]}
	}
	return node{v: d.members(n)[i].val}
}

func (d *doc) badRecord(i int) bool {
	j := sort.SearchInts(d.badRecs, i)
	return j < len(d.badRecs) && d.badRecs[j] == i
}

// pathMiss describes where a path stopped matching.
type pathMiss struct {
	failed string // the segment that failed, rendered
	prefix string // canonical path of the deepest value that exists
	at     node   // that value
	badRec int    // NDJSON record that is not valid JSON, or -1
}

// resolve walks segs from the root. It returns the node and its canonical
// path, or where the walk stopped.
func (d *doc) resolve(segs []segment) (node, string, *pathMiss) {
	n := d.root()
	canon := "$"
	for _, s := range segs {
		switch d.typeOf(n) {
		case "array":
			if s.kind == segKey {
				return n, canon, &pathMiss{failed: renderKey(s.key), prefix: canon, at: n, badRec: -1}
			}
			ln := d.length(n)
			i := s.index
			if i < 0 {
				i += ln
			}
			if i < 0 || i >= ln {
				return n, canon, &pathMiss{failed: renderIndex(s.index), prefix: canon, at: n, badRec: -1}
			}
			if n.records && d.badRecord(i) {
				return n, canon, &pathMiss{failed: renderIndex(i), prefix: canon, at: n, badRec: i}
			}
			n = d.elem(n, i)
			canon += renderIndex(i)
		case "object":
			if s.kind == segIndex {
				return n, canon, &pathMiss{failed: renderIndex(s.index), prefix: canon, at: n, badRec: -1}
			}
			found := false
			for _, c := range d.members(n) {
				if keyString(d.data, c.key) == s.key {
					n = node{v: c.val}
					found = true
					break
				}
			}
			if !found {
				return n, canon, &pathMiss{failed: renderKey(s.key), prefix: canon, at: n, badRec: -1}
			}
			canon += renderKey(s.key)
		default:
			f := renderKey(s.key)
			if s.kind == segIndex {
				f = renderIndex(s.index)
			}
			return n, canon, &pathMiss{failed: f, prefix: canon, at: n, badRec: -1}
		}
	}
	return n, canon, nil
}

// resolveRel walks segs from n without recording a path; used for
// iterate_over fields.
func (d *doc) resolveRel(n node, segs []segment) (node, bool) {
	for _, s := range segs {
		switch d.typeOf(n) {
		case "array":
			if s.kind == segKey {
				return n, false
			}
			ln := d.length(n)
			i := s.index
			if i < 0 {
				i += ln
			}
			if i < 0 || i >= ln {
				return n, false
			}
			n = d.elem(n, i)
		case "object":
			if s.kind == segIndex {
				return n, false
			}
			found := false
			for _, c := range d.members(n) {
				if keyString(d.data, c.key) == s.key {
					n, found = node{v: c.val}, true
					break
				}
			}
			if !found {
				return n, false
			}
		default:
			return n, false
		}
	}
	return n, true
}

// lineRange returns the 1-based first and last line of n.
func (d *doc) lineRange(n node) (int, int) {
	if n.records {
		if len(d.records) == 0 {
			return 0, 0
		}
		return d.lineOf(d.records[0].start), d.lineOf(d.records[len(d.records)-1].start)
	}
	end := n.v.end - 1
	if end < n.v.start {
		end = n.v.start
	}
	return d.lineOf(n.v.start), d.lineOf(end)
}

func linesText(a, b int) string {
	if a == b {
		return "line " + strconv.Itoa(a)
	}
	return "lines " + strconv.Itoa(a) + "-" + strconv.Itoa(b)
}
