package jsonscan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The walkers below read JSON already validated ([Check], or a file the
// caller wrote): they do not validate, never read outside b on any input,
// and are iterative, so nesting costs nothing but time.

// ValueEnd is the offset just past the value starting at b[i]: a string
// ([StringEnd]), an object or array (brackets counted outside strings,
// eight bytes at a time), or a number or literal (up to the next delimiter
// or space). len(b) when the value does not end.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return len(b)
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		return containerEnd(b, i)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// containerEnd is [ValueEnd] of the object or array at b[i].
func containerEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		// Skip 8 bytes at a time to the next quote or bracket: c|0x20 is
		// '{' for '[' and '{', '}' for ']' and '}'.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			y := x | 0x2020202020202020
			if t := zeroByte(x^0x2222222222222222) | zeroByte(y^0x7b7b7b7b7b7b7b7b) | zeroByte(y^0x7d7d7d7d7d7d7d7d); t != 0 {
				i += bits.TrailingZeros64(t) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			i = StringEnd(b, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return len(b)
}

// zeroByte flags (high bit) the bytes of x that are zero; the lowest flag
// is exact, higher ones may be false positives.
func zeroByte(x uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	return (x - lo) & ^x & hi
}

// Object calls fn for each member of the object at b[i], in order, with
// its key's raw span b[ks:ke] (quotes included: see [Unquote]) and the
// offset at of its value. fn returns the offset just past the value, so
// that each value is walked once, by whoever reads it: [ValueEnd](b, at)
// when fn does not read it, or a negative number to stop. Object returns
// the offset just past the object (or where it stopped).
func Object(b []byte, i int, fn func(ks, ke, at int) int) int {
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		ke := StringEnd(b, i)
		at := SkipSpace(b, ke)
		at = SkipSpace(b, at+1) // past ':'
		if at >= len(b) {
			return len(b)
		}
		end := fn(i, ke, at)
		if end < 0 {
			return at
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	return min(i+1, len(b))
}

// Array is [Object] for the items of the array at b[i]: fn gets each
// item's offset and returns the offset just past it (or a negative number
// to stop).
func Array(b []byte, i int, fn func(at int) int) int {
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] != ']' {
		end := fn(i)
		if end < 0 {
			return i
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	return min(i+1, len(b))
}

// Unquote is the value of the JSON string literal raw (quotes included):
// escapes resolved ([Unescape]), every other byte as written (invalid
// UTF-8 included, as gjson gives it). A literal without a backslash costs
// one copy; raw that is not a string literal gives "".
func Unquote(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 {
		return string(in)
	}
	out := make([]byte, len(in))
	return string(out[:Unescape(out, in, len(in))])
}

// Lookup returns the value of the member key of the object b (valid JSON,
// whitespace around it allowed), the last of that name as decoding would
// take it, and whether there is one.
func Lookup(b []byte, key string) ([]byte, bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	var val []byte
	found := false
	Object(b, i, func(ks, ke, at int) int {
		end := ValueEnd(b, at)
		if raw := b[ks:ke]; len(raw) == len(key)+2 && string(raw[1:len(raw)-1]) == key || bytes.IndexByte(raw, '\\') >= 0 && Unquote(raw) == key {
			val, found = b[at:end], true
		}
		return end
	})
	return val, found
}

// DeeperThan reports whether the value starting at b[i] nests arrays and
// objects more than limit deep, reading only as far as it must: to the
// value's end, or to the first bracket past limit.
func DeeperThan(b []byte, i, limit int) bool {
	if i >= len(b) || b[i] != '{' && b[i] != '[' {
		return limit < 0
	}
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i = StringEnd(b, i)
			continue
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			if depth--; depth == 0 {
				return false
			}
		}
		i++
	}
	return false
}
