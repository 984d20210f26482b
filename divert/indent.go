package divert

import (
	"bufio"
	"bytes"
)

// indentTo writes valid JSON t to w as [json.Indent] with no prefix and a
// two-space indent would, in one pass and without holding the result: a
// string is copied in one write, found with a byte search, and only the
// bytes between strings are looked at one by one. On the way it counts
// the items of every array up to lengthDepth containers deep, by its
// offset in t (what [gjson.Result.Index] says), so that the pointer's
// sketch need not walk them again.
func indentTo(w *bufio.Writer, t []byte, lengths arrayLengths) error {
	const lengthDepth = 4
	type open struct {
		array bool
		at    int // offset of the bracket
		items int
	}
	var stack []open
	indent := []byte("\n")
	needIndent := false // after an opening bracket, until the first item
	newline := func(depth int) {
		for len(indent) < 1+2*depth {
			indent = append(indent, ' ', ' ')
		}
		_, _ = w.Write(indent[:1+2*depth])
	}
	for i := 0; i < len(t); {
		c := t[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if needIndent && c != ']' && c != '}' {
			needIndent = false
			newline(len(stack))
		}
		if n := len(stack); n > 0 && stack[n-1].items == 0 && c != ']' && c != '}' {
			stack[n-1].items = 1
		}
		switch c {
		case '"':
			end := stringEnd(t, i)
			_, _ = w.Write(t[i:end])
			i = end
			continue
		case '{', '[':
			stack = append(stack, open{array: c == '[', at: i})
			_ = w.WriteByte(c)
			needIndent = true
		case '}', ']':
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.array && len(stack) < lengthDepth {
				lengths[top.at] = top.items
			}
			if needIndent {
				needIndent = false // empty: {} or []
			} else {
				newline(len(stack))
			}
			_ = w.WriteByte(c)
		case ',':
			stack[len(stack)-1].items++
			_ = w.WriteByte(',')
			newline(len(stack))
		case ':':
			_, _ = w.WriteString(": ")
		default:
			// A number or literal: up to the next delimiter.
			j := i + 1
			for j < len(t) && !isDelim(t[j]) {
				j++
			}
			_, _ = w.Write(t[i:j])
			i = j
			continue
		}
		i++
	}
	return nil
}

func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r', ':':
		return true
	}
	return false
}

// stringEnd is the offset just past the JSON string starting at t[i].
func stringEnd(t []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(t[j:], '"')
		if k < 0 {
			return len(t)
		}
		j += k
		// Escaped if preceded by an odd number of backslashes.
		n := 0
		for b := j - 1; b > i && t[b] == '\\'; b-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
}
