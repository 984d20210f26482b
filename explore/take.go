package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Taking part of a stored output for another tool (package reference):
// the same read root, the same file names, the same RFC 9535 paths and
// the same structured errors as the exploration tools, but what is
// selected is handed back as bytes for a tool call's arguments, never
// rendered, capped or charged as an answer to the model.

// Selector names what [Take] takes of a stored output. The zero value
// takes the whole file as stored.
type Selector struct {
	// Path is a JSON path as get_in takes it (RFC 9535 from $, or the
	// dotted shorthand); "" takes the whole file.
	Path string
	// First and Last are lines, 1-based and both included, as slice
	// takes them; Last 0 means to the end. First 0 takes no lines.
	First, Last int
	// JSON asks for the whole file as one JSON value: a JSON file's, an
	// NDJSON file's records or a CSV/TSV file's rows as an array. With
	// Path it changes nothing (a path's selection is JSON already).
	JSON bool
	// Max bounds the bytes taken; 0 means no bound. A file over it is
	// refused before it is read, when nothing narrower is asked for.
	Max int64
}

// Taken is what [Take] took.
type Taken struct {
	// Data is a copy, the caller's: a JSON value without insignificant
	// blank space when JSON, else text (the file as stored, or its lines).
	Data []byte
	JSON bool
	// Nodes is the number of nodes a path that is not singular selected
	// (Data is then their array); 0 for a singular path or no path.
	Nodes int
	// Kind is the file's kind: "JSON", "NDJSON", "CSV", "TSV",
	// "Markdown" or "text".
	Kind string
	// Canon is the canonical path of a singular path's value ("" else).
	Canon string
}

// ErrTooLarge is a [Take] past its [Selector].Max ["too_large"].
var ErrTooLarge = errors.New("larger than the bound")

// ErrNothingSelected is a [Take] whose path selects no node
// ["nothing_selected"]: a path that is not singular, over the file's
// values, found none.
var ErrNothingSelected = errors.New("the path selects nothing")

// Refusal is a [Take] refused for a reason the model can fix, with the
// answer an exploration tool gives for it: its error code (file_not_found,
// file_outside_root, key_path_not_found, invalid_path, not_json,
// invalid_json, invalid_range, nothing_selected, too_large, …) and the
// whole JSON object (message, what is there, ready-to-run suggestions).
// It wraps the sentinel the code stands for ([ErrNotFound],
// [ErrOutsideRoot], [ErrTooLarge], …) where there is one.
type Refusal struct {
	Code   string
	Answer json.RawMessage
	err    error
}

// Error is the answer's message.
func (r *Refusal) Error() string {
	var a struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(r.Answer, &a) == nil && a.Message != "" {
		return r.Code + ": " + a.Message
	}
	return r.Code
}

// Unwrap is the sentinel error of Code, if any.
func (r *Refusal) Unwrap() error { return r.err }

// entryCall is the call of an entry point called from outside the tools
// (Take, the view answers) as tool on file, ctx nil meaning
// context.Background(). done, deferred, turns a panic into *out's zero
// value and an error saying what ("taking", "viewing") failed: a bug must
// not take down a server shared by many agents.
func entryCall[T any](ctx context.Context, env *Env, tool, file, what string, out *T, err *error) (*call, func()) {
	if ctx == nil {
		ctx = context.Background()
	}
	return &call{ctx: ctx, env: env, tool: tool, file: file}, func() {
		if r := recover(); r != nil {
			var zero T
			*out, *err = zero, fmt.Errorf("%s %q failed unexpectedly: %v", what, file, r)
		}
	}
}

// Take reads file under env's read root, as the exploration tools name
// it (relative to [Env].Dir, never outside [Env].Root), and returns what
// sel selects. A problem the model can fix is a [*Refusal]; the call's
// end is ctx's error.
func Take(ctx context.Context, env *Env, file string, sel Selector) (t Taken, err error) {
	c, done := entryCall(ctx, env, ToolGetIn, file, "taking", &t, &err)
	defer done()
	switch {
	case sel.Path != "" && sel.First > 0:
		return Taken{}, refuse(errorResult("invalid_arguments", "take either a path or lines, not both."), nil)
	case sel.First < 0 || sel.Last < 0 || sel.Last > 0 && sel.Last < sel.First:
		return Taken{}, refuse(errorResult("invalid_range", fmt.Sprintf("lines need 1 <= first <= last (both inclusive, 1-based); got %d-%d.", sel.First, sel.Last),
			kv{"file", file}, kv{"suggestions", []suggestion{suggest(ToolSlice, "see the lines first", kv{"file", file}, kv{"start", max(sel.First, 1)}, kv{"end", max(sel.Last, sel.First, 1)})}}), nil)
	}
	whole := sel.Path == "" && sel.First == 0
	if whole && sel.Max > 0 {
		// Refused from its size, unread: the bound is there so that
		// nothing that large is read for a call's arguments.
		size, err := statSize(env, file)
		if err != nil {
			return Taken{}, refuse(c.fileError(err), err)
		}
		if size > sel.Max {
			return Taken{}, c.takeTooLarge(size, sel.Max)
		}
	}
	if sel.Path != "" {
		return c.takePath(sel)
	}
	if sel.First > 0 || !sel.JSON {
		d, res := c.load()
		if res != nil {
			return Taken{}, refuseLoad(res)
		}
		if sel.First > 0 {
			return c.takeLines(d, sel)
		}
		return Taken{Data: bytes.Clone(d.data), Kind: d.kind.String()}, nil
	}
	jd, res := c.loadJSON()
	if res != nil {
		return Taken{}, refuseLoad(res)
	}
	kind := c.doc.kind.String()
	var data []byte
	switch {
	case jd.kind == kindNDJSON:
		if len(jd.badRecs) > 0 {
			ln := jd.lineOf(jd.records[jd.badRecs[0]].start)
			return Taken{}, refuse(c.invalidJSON(jd, fmt.Sprintf("record %d on line %d does not parse", jd.badRecs[0], ln), ln), nil)
		}
		data = compactJSON(jd, jd.nodeItems(jd.records))
	default:
		data = bytes.Clone(compact(jd.data, jd.root().v))
	}
	if sel.Max > 0 && int64(len(data)) > sel.Max {
		return Taken{}, c.takeTooLarge(int64(len(data)), sel.Max)
	}
	return Taken{Data: data, JSON: true, Kind: kind}, nil
}

// takePath is Take of a path: a singular path's value, or a node list as
// an array of its values.
func (c *call) takePath(sel Selector) (Taken, error) {
	t, res := c.resolveTarget(sel.Path, nil)
	if res != nil {
		return Taken{}, refuseLoad(res)
	}
	kind := c.doc.kind.String()
	var data []byte
	out := Taken{JSON: true, Kind: kind}
	if t.multi {
		if len(t.nodes) == 0 {
			return Taken{}, refuse(errorResult("nothing_selected", fmt.Sprintf("%s selects no value of %q: nothing to pass.", sel.Path, c.file),
				kv{"file", c.file}, kv{"path", sel.Path},
				kv{"suggestions", []suggestion{
					suggest(ToolSchema, "the key tree, to find the path", kv{"file", c.file}, kv{"max_depth", 3}),
					suggest(ToolGetIn, "what the path selects (a list)", kv{"file", c.file}, kv{"path", sel.Path}, kv{"limit", 5}),
				}}), ErrNothingSelected)
		}
		out.Nodes = len(t.nodes)
		data = compactJSON(t.d, t.d.nodeItems(t.nodes))
	} else {
		out.Canon = t.canon
		if t.n.records {
			data = compactJSON(t.d, t.d.itemsOf(t.n))
		} else {
			data = bytes.Clone(compact(t.d.data, t.n.v))
		}
	}
	if sel.Max > 0 && int64(len(data)) > sel.Max {
		return Taken{}, c.takeTooLarge(int64(len(data)), sel.Max)
	}
	out.Data = data
	return out, nil
}

// takeLines is Take of lines first..last, as stored (line ends kept).
func (c *call) takeLines(d *doc, sel Selector) (Taken, error) {
	total := d.lineCount()
	if sel.First > total {
		return Taken{}, refuse(errorResult("invalid_range", fmt.Sprintf("%q has %s lines; line %d is past its end.", c.file, Comma(total), sel.First),
			kv{"file", c.file}, kv{"lines", total},
			kv{"suggestions", []suggestion{suggest(ToolSlice, "its last lines", kv{"file", c.file}, kv{"start", max(1, total-20)}, kv{"end", total})}}), nil)
	}
	last := total
	if sel.Last > 0 {
		last = min(sel.Last, total)
	}
	lines := d.lineStarts()
	start, end := lines[sel.First-1], len(d.data)
	if last < len(lines) {
		end = lines[last]
	}
	if sel.Max > 0 && int64(end-start) > sel.Max {
		return Taken{}, c.takeTooLarge(int64(end-start), sel.Max)
	}
	return Taken{Data: bytes.Clone(d.data[start:end]), Kind: d.kind.String()}, nil
}

// compactJSON is the items of it as one compact JSON array (a broken
// NDJSON record as null, as get_in shows it).
func compactJSON(d *doc, it items) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range it.len() {
		if i > 0 {
			b.WriteByte(',')
		}
		s, ok := it.at(i)
		switch {
		case !ok:
			b.WriteString("null")
		case s.start < 0:
			// The NDJSON file's root, reached again by a descendant path.
			b.Write(compactJSON(d, d.itemsOf(d.root())))
		default:
			b.Write(compact(d.data, s))
		}
	}
	b.WriteByte(']')
	return b.Bytes()
}

// takeTooLarge refuses a Take of size bytes, over max.
func (c *call) takeTooLarge(size, max int64) error {
	return refuse(errorResult("too_large", fmt.Sprintf("%s bytes of %q, over the bound of %s bytes for one call's arguments: pass a narrower part (a path or lines).", Comma(int(size)), c.file, Comma(int(max))),
		kv{"file", c.file}, kv{"bytes", size}, kv{"max_bytes", max},
		kv{"suggestions", []suggestion{
			suggest(ToolSchema, "the file's shape, to pick a part", kv{"file", c.file}, kv{"max_depth", 3}),
		}}), ErrTooLarge)
}

// refuse makes the Refusal of an exploration tool's error answer.
func refuse(res *tool.Result, sentinel error) *Refusal {
	r := &Refusal{Answer: json.RawMessage(res.Text), err: sentinel}
	var a struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(r.Answer, &a)
	r.Code = a.Error
	if r.err == nil {
		r.err = sentinelOf(r.Code)
	}
	return r
}

// refuseLoad is refuse of an answer whose sentinel its code names.
func refuseLoad(res *tool.Result) error { return refuse(res, nil) }

// sentinelOf is the sentinel error of an error code, nil for none.
func sentinelOf(code string) error {
	switch code {
	case "file_not_found":
		return ErrNotFound
	case "file_outside_root":
		return ErrOutsideRoot
	case "invalid_file_name":
		return ErrInvalidName
	case "not_a_regular_file":
		return ErrNotRegular
	case "io_error":
		return ErrIO
	case "no_read_root":
		return ErrNoRoot
	case "invalid_path":
		return ErrBadPath
	case "bad_filter":
		return ErrBadFilter
	}
	return nil
}

// Stored lists the stored outputs next to name, for an answer saying
// what there is instead of a file not found: the regular files of
// [Env].Dir (dot files, which are temporary, left out), those most like
// name first, at most n; and how many there are in all.
func Stored(env *Env, name string, n int) (names []string, total int) {
	if env == nil || env.Root == nil {
		return nil, 0
	}
	dir := path.Clean(strings.ReplaceAll(env.Dir, `\`, "/"))
	if dir == "" {
		dir = "."
	}
	ents, err := fs.ReadDir(env.Root.FS(), dir)
	if err != nil {
		return nil, 0
	}
	base := strings.ToLower(path.Base(strings.ReplaceAll(name, `\`, "/")))
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		cs = append(cs, cand{e.Name(), likeness(base, strings.ToLower(e.Name()))})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	for i := 0; i < len(cs) && i < n; i++ {
		names = append(names, cs[i].name)
	}
	return names, len(cs)
}

// likeness is how far b is from a (smaller: closer): the edit distance,
// or a shared prefix's credit when the names are too long to compare.
func likeness(a, b string) int {
	if d := editDistance(a, b); d < 1<<20 {
		return d
	}
	k := 0
	for k < len(a) && k < len(b) && a[k] == b[k] {
		k++
	}
	return 1<<20 - k
}
