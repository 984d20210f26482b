package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// Key is the member that makes an object a reference, and, at the top of
// a call's arguments, that holds the call's options.
const Key = "$scratchpad"

// Ref is one reference as written: {"$scratchpad": {"file": F, "path": P,
// "lines": "A-B", "as": "text"|"json"}}.
type Ref struct {
	File  string `json:"file"`
	Path  string `json:"path,omitempty"`
	Lines string `json:"lines,omitempty"`
	// As is "text", "json", or "" (decided by the target's type).
	As string `json:"as,omitempty"`

	first, last int // Lines parsed
}

// The values of [Ref].As.
const (
	AsText = "text"
	AsJSON = "json"
)

// Options are the call's own options, the top-level "$scratchpad" member
// of its arguments, which is taken out before the call is sent.
type Options struct {
	// Store asks for the result to be stored whatever its size: the
	// model gets the pointer, and the result can be passed on by
	// reference without ever entering the context.
	Store bool `json:"store,omitempty"`
}

// step is one step of a location in the arguments: a member's key or an
// item's index.
type step struct {
	key   string
	index int // -1 for a key
}

// location is where a value is in the arguments.
type location []step

// pointer renders l as a JSON Pointer (RFC 6901): "/content", "/rows/3".
func (l location) pointer() string {
	var b strings.Builder
	for _, s := range l {
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
			continue
		}
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s.key))
	}
	return b.String()
}

// site is one reference found in the arguments.
type site struct {
	start, end int // its span in the arguments
	at         location
	ref        Ref
	raw        []byte // as written
}

// found is what [find] found in a call's arguments.
type found struct {
	sites []site
	opts  Options
	// drop is the span of the top-level "$scratchpad" member (and one
	// comma beside it), to take out; zero when there is none.
	drop [2]int
}

// maybe reports whether args may hold a reference or options: cheaply,
// without walking them (a key may be written with \u escapes).
func maybe(args []byte) bool {
	return bytes.Contains(args, []byte("scratchpad")) || bytes.Contains(args, []byte(`\u`))
}

// find walks args, a call's arguments (valid JSON), for references and
// the top-level options. A reference is not looked into: what it names
// is data, not arguments.
func find(args []byte) (found, error) {
	var f found
	i := jsonscan.SkipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return f, nil
	}
	type mem struct{ ks, end int }
	var mems []mem
	opt := -1
	var err error
	jsonscan.Object(args, i, func(ks, ke, at int) int {
		if err != nil {
			return -1
		}
		var end int
		if isKey(args[ks:ke]) {
			end = jsonscan.ValueEnd(args, at)
			if opt >= 0 {
				err = invalid("", nil, "the arguments hold two %q members", Key)
				return -1
			}
			opt = len(mems)
			if f.opts, err = parseOptions(args[at:end]); err != nil {
				return -1
			}
		} else {
			end, err = f.walk(args, at, location{{key: jsonscan.Unquote(args[ks:ke]), index: -1}})
		}
		mems = append(mems, mem{ks, end})
		return end
	})
	if err != nil {
		return found{}, err
	}
	if opt >= 0 {
		switch {
		case opt+1 < len(mems):
			f.drop = [2]int{mems[opt].ks, mems[opt+1].ks}
		case opt > 0:
			f.drop = [2]int{mems[opt-1].end, mems[opt].end}
		default:
			f.drop = [2]int{mems[opt].ks, mems[opt].end}
		}
	}
	return f, nil
}

// walk looks for references in the value at args[i], at location at, and
// returns the offset past it.
func (f *found) walk(args []byte, i int, at location) (int, error) {
	switch args[i] {
	case '{':
		// One pass: an object is a reference when it has a "$scratchpad"
		// member, which is known only once its members were read, so
		// what was found in its other members is dropped then.
		mark := len(f.sites)
		n := 0
		var body []byte
		var err error
		end := jsonscan.Object(args, i, func(ks, ke, vat int) int {
			n++
			if raw := args[ks:ke]; isKey(raw) {
				e := jsonscan.ValueEnd(args, vat)
				body = args[vat:e]
				return e
			}
			var e int
			e, err = f.walk(args, vat, append(at[:len(at):len(at)], step{key: jsonscan.Unquote(args[ks:ke]), index: -1}))
			if err != nil {
				return -1
			}
			return e
		})
		if body == nil || err != nil {
			return end, err
		}
		f.sites = f.sites[:mark]
		raw := args[i:end]
		if n != 1 {
			return 0, invalid(at.pointer(), raw, "a reference is an object with one member, %q; this one has %d", Key, n)
		}
		r, err := parseRef(body, at, raw)
		if err != nil {
			return 0, err
		}
		f.sites = append(f.sites, site{start: i, end: end, at: at, ref: r, raw: raw})
		return end, nil
	case '[':
		var err error
		k := 0
		end := jsonscan.Array(args, i, func(vat int) int {
			var e int
			e, err = f.walk(args, vat, append(at[:len(at):len(at)], step{index: k}))
			k++
			if err != nil {
				return -1
			}
			return e
		})
		return end, err
	}
	return jsonscan.ValueEnd(args, i), nil
}

// isKey reports whether raw, a key as written (quotes included), is
// "$scratchpad".
func isKey(raw []byte) bool {
	return string(raw) == `"`+Key+`"` || bytes.IndexByte(raw, '\\') >= 0 && jsonscan.Unquote(raw) == Key
}

// parseRef reads a reference's body, strictly: the four members of their
// kinds, file not empty, nothing else.
func parseRef(body []byte, at location, raw []byte) (Ref, error) {
	var r Ref
	ms, err := strictMembers(body)
	if err != nil {
		return r, invalid(at.pointer(), raw, "%q must be an object: {%q: {\"file\": NAME}}", Key, Key)
	}
	for k, v := range ms {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return r, invalid(at.pointer(), raw, "%s must be a string", k)
		}
		switch k {
		case "file":
			r.File = s
		case "path":
			r.Path = s
		case "lines":
			r.Lines = s
		case "as":
			r.As = s
		default:
			return r, invalid(at.pointer(), raw, "a reference takes file, path, lines and as; not %q", k)
		}
	}
	switch {
	case r.File == "":
		return r, invalid(at.pointer(), raw, "file is required: a stored output's name as its pointer gives it")
	case r.As != "" && r.As != AsText && r.As != AsJSON:
		return r, invalid(at.pointer(), raw, `as must be "text" or "json", not %q`, r.As)
	case r.Path != "" && r.Lines != "":
		return r, invalid(at.pointer(), raw, "give path or lines, not both")
	}
	if r.Lines != "" {
		if r.first, r.last, err = parseLines(r.Lines); err != nil {
			return r, invalid(at.pointer(), raw, "%v", err)
		}
	}
	return r, nil
}

// parseLines reads "A-B" (both included, 1-based), "A-" (to the end) or
// "A" (one line).
func parseLines(s string) (first, last int, err error) {
	bad := fmt.Errorf(`lines must be "A-B" (1-based, both included), "A-" or "A", not %q`, s)
	a, b, dash := strings.Cut(strings.TrimSpace(s), "-")
	first, err = strconv.Atoi(strings.TrimSpace(a))
	if err != nil || first < 1 {
		return 0, 0, bad
	}
	switch b = strings.TrimSpace(b); {
	case !dash:
		last = first
	case b == "":
		last = 0
	default:
		if last, err = strconv.Atoi(b); err != nil || last < first {
			return 0, 0, bad
		}
	}
	return first, last, nil
}

// parseOptions reads the top-level "$scratchpad" member.
func parseOptions(body []byte) (Options, error) {
	var o Options
	ms, err := strictMembers(body)
	if err != nil {
		return o, invalid("/"+Key, body, `at the top of the arguments, %q holds the call's options: {"store": true}`, Key)
	}
	for k, v := range ms {
		switch k {
		case "store":
			if json.Unmarshal(v, &o.Store) != nil {
				return o, invalid("/"+Key, body, "store must be true or false")
			}
		case "file":
			return o, invalid("/"+Key, body, "a reference goes in an argument's place ({\"content\": {%q: {\"file\": …}}}); at the top of the arguments %q holds the call's options: {\"store\": true}", Key, Key)
		default:
			return o, invalid("/"+Key, body, "the call's options are store; not %q", k)
		}
	}
	return o, nil
}

// strictMembers are the members of the object body by exact key (a key
// twice is refused: which one counts would be a guess).
func strictMembers(body []byte) (map[string]json.RawMessage, error) {
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, fmt.Errorf("not an object")
	}
	out := map[string]json.RawMessage{}
	var err error
	jsonscan.Object(body, i, func(ks, ke, at int) int {
		k := jsonscan.Unquote(body[ks:ke])
		end := jsonscan.ValueEnd(body, at)
		if _, dup := out[k]; dup {
			err = fmt.Errorf("member %q twice", k)
			return -1
		}
		out[k] = body[at:end]
		return end
	})
	return out, err
}

// invalid is ErrInvalid's answer for the reference raw at at.
func invalid(at string, raw []byte, format string, args ...any) *Error {
	e := &Error{Code: "invalid_reference", Message: fmt.Sprintf(format, args...) + ". Nothing was sent.", At: at, err: ErrInvalid}
	if raw != nil {
		e.Reference = json.RawMessage(bytes.Clone(raw))
	}
	return e
}
