package divert

import (
	"bytes"
	"errors"
	"io"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// shortString is how many bytes of a string indentTo looks at itself,
// byte by byte, before it asks [jsonscan.StringEnd] (quick on long ones,
// a call too many on the usual short key or value).
const shortString = 24

// errNotJSON is what indentTo stops with on input it cannot lay out.
var errNotJSON = errors.New("not JSON")

// indentTo writes valid JSON t to w as [json.Indent] with no prefix and a
// two-space indent would, in one pass and without holding the result (it
// goes out in 1 MiB writes). On the way it counts the items of the arrays
// the pointer's sketch looks at (the root, and objects' members up to
// lengthDepth containers deep), by offset in t (what [gjson.Result.Index]
// says), and notes where those containers end, so that the sketch need
// not walk them again. Given what is not JSON, it writes nonsense or
// stops with errNotJSON, never reads outside t, and nests no deeper than
// jsonscan.MaxDepth. It also tells in which [jsonLayout] t itself was
// written, so that t can be read back from the file (see source.go).
//
// It walks t itself rather than through jsonscan on purpose: indenting,
// counting the sketch's arrays, noting container ends and telling the
// layout are one pass over outputs of tens of MB, and it is already the
// largest own-time function of a save (BenchmarkSave20MB; NOTES, the
// divert profile: 8.5%); a jsonscan walk beside it would be a second.
// It is iterative (its own stack), so hostile nesting costs no recursion.
func indentTo(w io.Writer, t []byte, lengths arrayLengths, ends containerEnds) (jsonLayout, error) {
	const (
		lengthDepth = 4
		flushAt     = 1 << 20
	)
	type open struct {
		array bool
		at    int // offset of the bracket
		items int
	}
	var stack []open
	arrays := 0 // arrays in stack
	out := make([]byte, 0, flushAt+64<<10)
	var werr error
	// The layout: t is what was written (pos: how much of it matched),
	// or t has no whitespace between tokens but one space after each
	// separator (spaced), or none at all.
	same, pos := true, 0
	seps, spaced, otherSpace := 0, 0, 0
	check := func(b []byte) {
		if same {
			same = pos+len(b) <= len(t) && bytes.Equal(t[pos:pos+len(b)], b)
			pos += len(b)
		}
	}
	flush := func() {
		if werr == nil && len(out) > 0 {
			check(out)
			_, werr = w.Write(out)
		}
		out = out[:0]
	}
	indent := []byte("\n")
	newline := func(depth int) {
		for len(indent) < 1+2*depth {
			indent = append(indent, ' ', ' ')
		}
		out = append(out, indent[:1+2*depth]...)
	}
	needIndent := false // after an opening bracket, until the first item
	// first starts the line of a container's first item, when a value or
	// key opens it (and counts that item; commas count the others).
	first := func() {
		needIndent = false
		stack[len(stack)-1].items = 1
		newline(len(stack))
	}
	for i := 0; i < len(t); {
		if len(out) >= flushAt {
			flush()
			if werr != nil {
				return layoutOther, werr // the disk is full: no use going on
			}
		}
		switch c := t[i]; c {
		case '"':
			if needIndent {
				first()
			}
			j, lim := i+1, min(len(t), i+shortString)
			for j < lim && t[j] != '"' && t[j] != '\\' {
				j++
			}
			end := j + 1
			if j == lim || t[j] != '"' {
				end = jsonscan.StringEnd(t, i)
			}
			if end-i > flushAt {
				flush()
				if werr == nil {
					same = same && pos == i
					pos = end
					_, werr = w.Write(t[i:end])
				}
			} else {
				out = append(out, t[i:end]...)
			}
			i = end
		case ':':
			seps++
			out = append(out, ':', ' ')
			i++
		case ',':
			if len(stack) == 0 {
				return layoutOther, errNotJSON
			}
			stack[len(stack)-1].items++
			seps++
			out = append(out, ',')
			newline(len(stack))
			i++
		case '{', '[':
			if needIndent {
				first()
			}
			if len(stack) == jsonscan.MaxDepth {
				return layoutOther, errNotJSON
			}
			stack = append(stack, open{array: c == '[', at: i})
			if c == '[' {
				arrays++
			}
			out = append(out, c)
			needIndent = true
			i++
		case '}', ']':
			if len(stack) == 0 {
				return layoutOther, errNotJSON
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			// Only what the sketch walks: the root and containers
			// reached from it through objects alone, not what is in an
			// array.
			if top.array {
				arrays--
			}
			if len(stack) < lengthDepth && arrays == 0 {
				if top.array {
					lengths[top.at] = top.items
				}
				if ends != nil {
					ends[top.at] = i + 1
				}
			}
			if needIndent {
				needIndent = false // empty: {} or []
			} else {
				newline(len(stack))
			}
			out = append(out, c)
			i++
		case ' ', '\t', '\n', '\r':
			j := i + 1
			for j < len(t) && isSpace(t[j]) {
				j++
			}
			if j == i+1 && c == ' ' && i > 0 && (t[i-1] == ',' || t[i-1] == ':') {
				spaced++
			} else {
				otherSpace++
			}
			i = j
		default:
			// A number or literal: up to the next delimiter.
			if needIndent {
				first()
			}
			j := i + 1
			for j < len(t) && !isDelim(t[j]) {
				j++
			}
			out = append(out, t[i:j]...)
			i = j
		}
	}
	flush()
	switch {
	case werr != nil:
		return layoutOther, werr
	case same && pos == len(t):
		return layoutIndented, nil
	case spaced+otherSpace == 0:
		return layoutCompact, nil
	case otherSpace == 0 && spaced == seps:
		return layoutSpaced, nil
	}
	return layoutOther, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r', ':':
		return true
	}
	return false
}
