package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Viewing a stored output for a person (package appview's page): the
// same read root, file names, RFC 9535 paths and filters, sort and
// structured errors as the exploration tools, but the answer is data for
// a page to render (items, a tree node's children, lines), never text
// for a model: no footer, no per-call token cap, no budget charge. What
// bounds an answer is [MaxViewWindow] and the caller's byte bound.

// MaxViewWindow bounds the items, children or lines one view answer
// holds: a page shows a screenful, and a window this long is already
// hundreds of screens.
const MaxViewWindow = 1000

// Window is a half-open window over a sequence: items [Offset,
// Offset+Limit). Limit 0 means [MaxViewWindow].
type Window struct {
	Offset, Limit int
}

func (w Window) bounds(n int) (lo, hi int) {
	lim := w.Limit
	if lim <= 0 || lim > MaxViewWindow {
		lim = MaxViewWindow
	}
	return window(n, w.Offset, lim, true)
}

// ItemsQuery asks for a window of the items of an array: the array at
// Path (an NDJSON file's records, a CSV file's rows at "$" or ""), those
// matching Filter, ordered by SortBy and Order ("asc", "desc"), as
// iterate_over takes them.
type ItemsQuery struct {
	Path, Filter, SortBy, Order string
	Window
}

// Items is a window of an array's items.
type Items struct {
	Kind string `json:"kind"` // the file's kind: "JSON", "NDJSON", "CSV", …
	Path string `json:"path"` // the array's canonical path
	// Items are the window's items as stored (compact), Index each one's
	// index in the array.
	Items []json.RawMessage `json:"items"`
	Index []int             `json:"index"`
	// Offset is where the window starts among the matches; Matched is
	// how many items match (all of them without a filter), Total how
	// many the array has.
	Offset  int `json:"offset"`
	Matched int `json:"matched"`
	Total   int `json:"total"`
}

// ViewItems answers q over file as iterate_over would, with whole items.
// A problem the person can fix (a bad filter, a path that is not an
// array) is a [*Refusal] holding the exploration tools' answer for it.
func ViewItems(ctx context.Context, env *Env, file string, q ItemsQuery) (out Items, err error) {
	c, done := entryCall(ctx, env, ToolIterateOver, file, "viewing", &out, &err)
	defer done()
	iq := c.queryArgs(q.Filter, q.SortBy, q.Order)
	if q.Order != "" && q.Order != "asc" && q.Order != "desc" {
		c.errs = append(c.errs, fmt.Sprintf("order is asc or desc, not %q", q.Order))
	}
	if res := c.argErr(); res != nil {
		return Items{}, refuseLoad(res)
	}
	p := q.Path
	if strings.TrimSpace(p) == "" {
		p = "$"
	}
	t, res := c.resolveTarget(p, &iq)
	if res != nil {
		return Items{}, refuseLoad(res)
	}
	it, res := c.items(t)
	if res != nil {
		return Items{}, refuseLoad(res)
	}
	total := it.len()
	var idx []int
	if iq.active() {
		retry := c.retryWith([]kv{{"file", file}, {"path", t.canon}})
		if res := c.parseQuery(it, &iq, retry); res != nil {
			return Items{}, refuseLoad(res)
		}
		if idx, _, res = c.selectQuery(it, t.canon, &iq, retry); res != nil {
			return Items{}, refuseLoad(res)
		}
	}
	matched := total
	if idx != nil {
		matched = len(idx)
	}
	lo, hi := q.bounds(matched)
	out = Items{Kind: t.d.kind.String(), Path: t.canon, Offset: lo, Matched: matched, Total: total,
		Items: make([]json.RawMessage, 0, hi-lo), Index: make([]int, 0, hi-lo)}
	for j := lo; j < hi; j++ {
		i := j
		if idx != nil {
			i = idx[j]
		}
		s, ok := it.at(i)
		item := json.RawMessage("null") // an NDJSON record that does not parse
		if ok {
			item = compact(t.d.data, s)
		}
		out.Items = append(out.Items, bytes.Clone(item))
		out.Index = append(out.Index, i)
	}
	return out, nil
}

// Child is one member of a container in a [Node].
type Child struct {
	Key  string `json:"key"`  // the member's name, or the element's index
	Path string `json:"path"` // its canonical path, to ask for its children
	Type string `json:"type"` // object, array, string, number, boolean, null
	// Value is a scalar's JSON (a string cut to [maxPreview] bytes, Cut
	// said); Len a container's member count.
	Value json.RawMessage `json:"value,omitempty"`
	Cut   bool            `json:"cut,omitempty"`
	Len   int             `json:"len,omitempty"`
}

// maxPreview bounds a string shown in a tree: a tree row is one line.
const maxPreview = 2000

// Node is the value at a path of a JSON file with a window of its
// members, for a tree that opens one level at a time.
type Node struct {
	Kind     string  `json:"kind"`
	Path     string  `json:"path"`
	Type     string  `json:"type"`
	Children []Child `json:"children"`
	Offset   int     `json:"offset"`
	Total    int     `json:"total"` // the container's member count
}

// ViewNode answers the value at path (singular; "" is the whole file)
// and a window of its members.
func ViewNode(ctx context.Context, env *Env, file, path string, w Window) (out Node, err error) {
	c, done := entryCall(ctx, env, ToolGetIn, file, "viewing", &out, &err)
	defer done()
	d, res := c.loadJSON()
	if res != nil {
		return Node{}, refuseLoad(res)
	}
	if strings.TrimSpace(path) == "" {
		path = "$"
	}
	pq, res := c.parsePathArg(path)
	if res != nil {
		return Node{}, refuseLoad(res)
	}
	if !pq.singular {
		return Node{}, refuseLoad(errorResult("invalid_path", fmt.Sprintf("%s selects several values; a tree opens one value at a time: name one ($.items[3], not $.items[*]).", path), kv{"path", path}))
	}
	n, canon, miss := d.resolve(segments(pq))
	if miss != nil {
		return Node{}, refuseLoad(c.notFound(d, path, miss))
	}
	out = Node{Kind: d.kind.String(), Path: canon, Type: d.typeOf(n), Children: []Child{}}
	if out.Type != "object" && out.Type != "array" {
		out.Children = append(out.Children, d.childOf(canon, n, nil, -1))
		out.Total = 1
		return out, nil
	}
	// One scan of the container for its count and every child: under
	// bigContainer members is not kept, and d.elem would scan it again
	// for each child.
	var kids []child
	if n.records {
		out.Total = len(d.records)
	} else {
		kids = d.members(n)
		out.Total = len(kids)
	}
	lo, hi := w.bounds(out.Total)
	out.Offset = lo
	for i := lo; i < hi; i++ {
		if i&1023 == 1023 && ctx.Err() != nil {
			return Node{}, refuseLoad(c.cancelled(ctx.Err()))
		}
		var key *string
		if out.Type == "object" {
			k := keyString(d.data, kids[i].key)
			key = &k
		}
		var m node
		if n.records {
			m = d.elem(n, i)
		} else {
			m = node{v: kids[i].val}
		}
		out.Children = append(out.Children, d.childOf(canon, m, key, i))
	}
	return out, nil
}

// childOf describes value n, member key (an object's) or element i (an
// array's, key nil) of the container at canon; i -1 is the value itself.
func (d *doc) childOf(canon string, n node, key *string, i int) Child {
	ch := Child{Type: d.typeOf(n)}
	switch {
	case i < 0:
		ch.Key, ch.Path = "", canon
	case key != nil:
		ch.Key, ch.Path = *key, canon+renderKey(*key)
	default:
		ch.Key, ch.Path = strconv.Itoa(i), canon+renderIndex(i)
	}
	switch ch.Type {
	case "object", "array":
		ch.Len = d.length(n)
	default:
		v := compact(d.data, n.v)
		if ch.Type == "string" && len(v) > maxPreview {
			var s string
			if json.Unmarshal(v, &s) == nil {
				s = cutUTF8(s, maxPreview)
				v, _ = json.Marshal(s)
				ch.Cut = true
			}
		}
		ch.Value = bytes.Clone(v)
	}
	return ch
}

// cutUTF8 is s cut to at most n bytes, on a rune boundary.
func cutUTF8[T string | []byte](s T, n int) T {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Line is one numbered line (1-based) of a stored output.
type Line struct {
	N    int    `json:"n"`
	Text string `json:"text"`
}

// maxViewLine bounds a line's text in a view answer (a minified JSON
// file is one line of megabytes); a longer one is cut and says so.
const maxViewLine = 4000

// Lines is a window of a stored output's lines, or of those matching a
// search.
type Lines struct {
	Kind  string `json:"kind"`
	Lines []Line `json:"lines"`
	// Offset is where the window starts among the matching lines;
	// Matched how many match (all without a search); Total how many
	// lines the file has. Literal says the search was not a valid RE2
	// regexp and was searched as text.
	Offset  int  `json:"offset"`
	Matched int  `json:"matched"`
	Total   int  `json:"total"`
	Literal bool `json:"literal,omitempty"`
}

// ViewLines answers a window of file's lines; with search, of the lines
// matching it (RE2, case-insensitive; an invalid one is searched as
// literal text, as grep does).
func ViewLines(ctx context.Context, env *Env, file, search string, w Window) (out Lines, err error) {
	c, done := entryCall(ctx, env, ToolGrep, file, "viewing", &out, &err)
	defer done()
	if len(search) > maxPathChars {
		return Lines{}, refuseLoad(errorResult("pattern_too_long", fmt.Sprintf("the search is %d bytes; at most %d.", len(search), maxPathChars)))
	}
	d, res := c.load()
	if res != nil {
		return Lines{}, refuseLoad(res)
	}
	out = Lines{Kind: d.kind.String(), Total: d.lineCount(), Lines: []Line{}}
	var match []int // 0-based line indexes matching, nil without a search
	if search != "" {
		// Not grep's matcher (compileGrep, grepLines): its literal
		// scanners fold ASCII case only (not K to the Kelvin sign), and it
		// matches a CRLF line with its \r, so `down$` would miss it.
		re, rerr := regexp.Compile("(?i)" + search)
		if rerr != nil {
			re, out.Literal = regexp.MustCompile("(?i)"+regexp.QuoteMeta(search)), true
		}
		match = []int{}
		for i := range out.Total {
			if i&4095 == 4095 && ctx.Err() != nil {
				return Lines{}, refuseLoad(c.cancelled(ctx.Err()))
			}
			if re.Match(d.line(i + 1)) {
				match = append(match, i)
			}
		}
	}
	out.Matched = out.Total
	if match != nil {
		out.Matched = len(match)
	}
	lo, hi := w.bounds(out.Matched)
	out.Offset = lo
	for j := lo; j < hi; j++ {
		i := j
		if match != nil {
			i = match[j]
		}
		l := bytes.TrimRight(d.line(i+1), "\r\n")
		var text string
		if len(l) > maxViewLine {
			cut := cutUTF8(l, maxViewLine) // only the cut part becomes a string
			text = string(cut) + fmt.Sprintf(" … (%d bytes more)", len(l)-len(cut))
		} else {
			text = string(l)
		}
		out.Lines = append(out.Lines, Line{N: i + 1, Text: text})
	}
	return out, nil
}

// ErrBusy is [Env.Slot] when the agent, or its owner, has as many
// calls running as it may.
var ErrBusy = errors.New("busy")

// Slot takes a call slot of the agent and one of its owner's for a view
// answer, as an exploration call does (a page paging a large output is
// as much work as a model's call); release gives them back. It fails
// with [ErrBusy] at once when either bound is full.
func (e *Env) Slot() (release func(), err error) {
	release, full := e.acquire()
	if full != nil {
		return nil, fmt.Errorf("%w: %d calls of this agent or its owner are running, the most at once; retry when one has answered", ErrBusy, cap(full))
	}
	return release, nil
}
