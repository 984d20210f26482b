package divert

import (
	"io"
)

// indentTo writes valid JSON t to w as [json.Indent] with no prefix and a
// two-space indent would, in one pass and without holding the result (it
// goes out in 1 MiB writes). On the way it counts the items of the arrays
// the pointer's sketch looks at (the root, and objects' members up to
// lengthDepth containers deep), by offset in t (what [gjson.Result.Index]
// says), and notes where those containers end, so that the sketch need
// not walk them again.
func indentTo(w io.Writer, t []byte, lengths arrayLengths, ends containerEnds) error {
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
	flush := func() {
		if werr == nil && len(out) > 0 {
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
	for i := 0; i < len(t); {
		if len(out) >= flushAt {
			flush()
		}
		c := t[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			i++
			continue
		case ']', '}':
		default:
			if needIndent {
				needIndent = false
				newline(len(stack))
			}
			if n := len(stack); n > 0 && stack[n-1].items == 0 {
				stack[n-1].items = 1
			}
		}
		switch c {
		case '"':
			end := stringEnd(t, i)
			if end-i > flushAt {
				flush()
				if werr == nil {
					_, werr = w.Write(t[i:end])
				}
			} else {
				out = append(out, t[i:end]...)
			}
			i = end
			continue
		case '{', '[':
			stack = append(stack, open{array: c == '[', at: i})
			if c == '[' {
				arrays++
			}
			out = append(out, c)
			needIndent = true
		case '}', ']':
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
		case ',':
			stack[len(stack)-1].items++
			out = append(out, ',')
			newline(len(stack))
		case ':':
			out = append(out, ':', ' ')
		default:
			// A number or literal: up to the next delimiter.
			j := i + 1
			for j < len(t) && !isDelim(t[j]) {
				j++
			}
			out = append(out, t[i:j]...)
			i = j
			continue
		}
		i++
	}
	flush()
	return werr
}

func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r', ':':
		return true
	}
	return false
}

// stringEndStr is the offset just past the JSON string starting at t[i].
// A plain loop: text holding JSON has an escaped quote every few bytes,
// where a byte search would restart every few bytes.
func stringEndStr(t string, i int) int {
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(t)
}

// stringEnd is [stringEndStr] of bytes.
func stringEnd(t []byte, i int) int {
	for j := i + 1; j < len(t); j++ {
		switch t[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(t)
}
