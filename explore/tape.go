package explore

import (
	"sort"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// A descendant segment (..) visits every container under its input node,
// and lists each one's children. Found by skipping values, a container's
// end costs a scan of its bytes, once for each container around it that
// is listed: a 40 MB directory tree nests a node fourteen containers
// deep, and $..[?…] read its bytes that many times over. The tape lists
// every container of a file once, in the order they start, with where it
// ends and where its descendants end in the tape: the containers under a
// node are a range of it, in the order the RFC visits them, and a child
// container is skipped by a look-up, so a descent reads each byte once.

// tapeEntry is one container: its bytes [start, end), and next, the index
// of the first entry after its descendants.
type tapeEntry struct {
	start, end, next int
}

// tape is the doc's container list, built on the first descent (one pass
// over the file) and kept with the doc.
func (d *doc) tape() []tapeEntry {
	d.tapeOnce.Do(func() {
		var t []tapeEntry
		if d.kind == kindNDJSON {
			for i, r := range d.records {
				if len(d.badRecs) > 0 && d.badRecord(i) {
					continue
				}
				t = appendTape(t, d.data[:r.end], r.start)
			}
		} else {
			t = appendTape(t, d.data, 0)
		}
		d.tapeList = t
		d.extra.Add(int64(cap(t)) * 24)
	})
	return d.tapeList
}

// tapeByte marks the bytes appendTape acts on: quotes, brackets, and the
// newlines that indentation follows.
var tapeByte = func() (t [256]bool) {
	for _, c := range `"{}[]` + "\n" {
		t[c] = true
	}
	return
}()

// appendTape appends the containers of the valid JSON in b[from:].
func appendTape(t []tapeEntry, b []byte, from int) []tapeEntry {
	var stack []int
	for i := from; i < len(b); i++ {
		if !tapeByte[b[i]] {
			continue
		}
		switch b[i] {
		case '\n':
			i = jsonscan.SkipSpace(b, i) - 1 // the indentation, eight bytes at a time
		case '"':
			i = jsonscan.StringEnd(b, i) - 1
		case '{', '[':
			stack = append(stack, len(t))
			t = append(t, tapeEntry{start: i})
		case '}', ']':
			if len(stack) == 0 {
				return t
			}
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			t[k].end, t[k].next = i+1, len(t)
		}
	}
	return t
}

// tapeIndex is the index of the container starting at byte start.
func tapeIndex(t []tapeEntry, start int) (int, bool) {
	k := sort.Search(len(t), func(k int) bool { return t[k].start >= start })
	return k, k < len(t) && t[k].start == start
}

// descend calls fn with each container of the tape range under v (v
// first), in the order the RFC visits them, until fn returns false; the
// virtual root of an NDJSON file first, then each record's.
func (e *evaluator) descend(v span, fn func(k int, x span) bool) bool {
	t := e.d.tape()
	lo, hi := 0, len(t)
	if v.start >= 0 {
		k, ok := tapeIndex(t, v.start)
		if !ok {
			return true // a scalar: no containers under it
		}
		lo, hi = k, t[k].next
	} else if !fn(-1, v) {
		return false
	}
	for k := lo; k < hi; k++ {
		if !e.tick() || !fn(k, span{t[k].start, t[k].end}) {
			return false
		}
	}
	return true
}

// tapeChildren calls add with each child of container k of the tape, in
// order, until add returns false: a child container's end read from the
// tape, a scalar's found by skipping it.
func (e *evaluator) tapeChildren(t []tapeEntry, k int, add func(span) bool) bool {
	b, x := e.data, t[k]
	obj := b[x.start] == '{'
	next := k + 1 // the next child container's entry
	i := jsonscan.SkipSpace(b, x.start+1)
	for i < x.end {
		if obj {
			if b[i] != '"' {
				return true
			}
			i = jsonscan.SkipSpace(b, jsonscan.SkipSpace(b, jsonscan.StringEnd(b, i))+1)
		} else if b[i] == ']' {
			return true
		}
		var ve int
		if c := b[i]; (c == '{' || c == '[') && next < len(t) && t[next].start == i {
			ve = t[next].end
			next = t[next].next
		} else {
			ve = jsonscan.ValueEnd(b, i)
		}
		if !add(span{i, ve}) {
			return false
		}
		i = jsonscan.SkipSpace(b, ve)
		if i < x.end && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	return true
}
