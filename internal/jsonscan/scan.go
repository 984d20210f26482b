// Package jsonscan validates JSON bytes without recursion and without
// decoding them, and reports the members of a top-level object as
// sub-slices of the input.
//
// # Basics
//
// [Valid] accepts what RFC 8259 calls one JSON text, surrounded by
// optional whitespace, as gjson.ValidBytes does (strings are not checked
// for UTF-8 validity), but nested no deeper than [MaxDepth]. [Check] says
// why not; [Scan] also hands the caller each member of a top-level object,
// and [Members] gives them as offsets. [Stream] does the same for input
// that arrives in pieces (a message read from a pipe), so that when its
// end arrives only the last piece is left to check.
//
//	err := jsonscan.Scan(msg, func(key []byte, value []byte) {
//		if string(key) == "result" { result = value }
//	})
//
// # Caveats
//
//   - Recursive validators (gjson's among them) walk 20 MB of "[" into a
//     goroutine stack over its 1 GB limit, which is a fatal error, not a
//     panic: one hostile upstream answer would end the process. This one
//     keeps a stack of its own and refuses input nested deeper than
//     [MaxDepth], encoding/json's own limit.
//   - Keys are given as written, without their quotes: a key holding
//     escapes ("res\u0075lt") is given escaped.
package jsonscan

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of arrays and objects accepted: the
// limit encoding/json also applies.
const MaxDepth = 10000

// Errors [Check] and [Scan] return, as the Err of an [*Error].
var (
	ErrInvalid = errors.New("not valid JSON")
	ErrTooDeep = fmt.Errorf("JSON nested deeper than %d levels", MaxDepth)
)

// Error says where the input went wrong: the offset, and in a top-level
// object, the key of the member whose value it was in (nil elsewhere).
type Error struct {
	Err    error // ErrInvalid or ErrTooDeep
	Offset int
	Member []byte
}

func (e *Error) Error() string { return fmt.Sprintf("%v (at byte %d)", e.Err, e.Offset) }
func (e *Error) Unwrap() error { return e.Err }

// Valid reports whether b is one JSON value, nested no deeper than
// [MaxDepth].
func Valid(b []byte) bool { return Scan(b, nil) == nil }

// Check is [Valid] with the reason: nil, or an [*Error] wrapping
// [ErrInvalid] or [ErrTooDeep].
func Check(b []byte) error { return Scan(b, nil) }

// Scan validates b as [Check] does and, when b is an object, calls member
// (if not nil) for each of its members in order, with the key as written
// (no quotes) and the value's bytes, both sub-slices of b. member is
// called before the whole input is validated: if Scan then fails, what it
// was given must be dropped.
func Scan(b []byte, member func(key, value []byte)) error {
	if err := scan(b, member, MaxDepth); err != nil {
		return err
	}
	return nil
}

// ValidDepth is [Valid] with a lower depth limit: b is one JSON value
// nested at most limit deep (limit is capped at [MaxDepth]). For readers
// that recurse over what they accept (a schema read with gjson) and so
// want a small bound.
func ValidDepth(b []byte, limit int) bool {
	return scan(b, nil, min(limit, MaxDepth)) == nil
}

func scan(b []byte, member func(key, value []byte), maxDepth int) (err *Error) {
	// The stack of open containers, a bit each (1: object), 64 a word.
	var stack []uint64
	depth := 0
	// key is the key of the top-level member whose value is being read
	// (nil between members), valueAt where that value starts.
	var key []byte
	valueAt := 0
	defer func() {
		if err != nil {
			err.Member = key
		}
	}()
	i := SkipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return fail(ErrInvalid, i)
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth >= maxDepth {
				return fail(ErrTooDeep, i)
			}
			if depth%64 == 0 && depth/64 == len(stack) {
				stack = append(stack, 0)
			}
			w := &stack[depth/64]
			if c == '{' {
				*w |= 1 << (depth % 64)
			} else {
				*w &^= 1 << (depth % 64)
			}
			depth++
			i = SkipSpace(b, i+1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				depth--
				i++
				break // an empty container: a value ended
			}
			if c == '[' {
				continue // the first item
			}
			k, kb, err := readKey(b, i)
			if err != nil {
				return err
			}
			if i = k; depth == 1 {
				key, valueAt = kb, i
			}
			continue
		case '"':
			end, ok := stringEnd(b, i+1)
			if !ok {
				return fail(ErrInvalid, end)
			}
			i = end
		case 't':
			if !literal(b, i, "true") {
				return fail(ErrInvalid, i)
			}
			i += 4
		case 'f':
			if !literal(b, i, "false") {
				return fail(ErrInvalid, i)
			}
			i += 5
		case 'n':
			if !literal(b, i, "null") {
				return fail(ErrInvalid, i)
			}
			i += 4
		default:
			end, ok := numberEnd(b, i)
			if !ok {
				return fail(ErrInvalid, end)
			}
			i = end
		}
		// A value ended at i: close what it ends, up to a comma.
		for {
			if depth == 1 && stack[0]&1 == 1 && key != nil {
				if member != nil {
					member(key, b[valueAt:i])
				}
				key = nil
			}
			i = SkipSpace(b, i)
			if depth == 0 {
				if i != len(b) {
					return fail(ErrInvalid, i)
				}
				return nil
			}
			if i >= len(b) {
				return fail(ErrInvalid, i)
			}
			obj := stack[(depth-1)/64]>>((depth-1)%64)&1 == 1
			if b[i] == ',' {
				i = SkipSpace(b, i+1)
				if obj {
					k, kb, err := readKey(b, i)
					if err != nil {
						return err
					}
					if i = k; depth == 1 {
						key, valueAt = kb, i
					}
				}
				break // the next value
			}
			if obj && b[i] == '}' || !obj && b[i] == ']' {
				depth--
				i++
				continue // the container was a value too
			}
			return fail(ErrInvalid, i)
		}
	}
}

func fail(err error, at int) *Error { return &Error{Err: err, Offset: at} }

// readKey reads `"key" :` and the whitespace after it from b[i] and
// returns where the value starts and the key (without quotes).
func readKey(b []byte, i int) (int, []byte, *Error) {
	if i >= len(b) || b[i] != '"' {
		return i, nil, fail(ErrInvalid, i)
	}
	end, ok := stringEnd(b, i+1)
	if !ok {
		return end, nil, fail(ErrInvalid, end)
	}
	key := b[i+1 : end-1]
	i = SkipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return i, nil, fail(ErrInvalid, i)
	}
	return SkipSpace(b, i+1), key, nil
}

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace (space, tab, newline, carriage return), or len(b).
func SkipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case '\n':
			i++
			// The indentation of pretty-printed JSON (stored outputs are),
			// eight spaces at a time: a value fourteen levels deep has 28.
			for i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == 0x2020202020202020 {
				i += 8
			}
		case ' ', '\t', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func literal(b []byte, i int, word string) bool {
	return len(b)-i >= len(word) && string(b[i:i+len(word)]) == word
}

// stringEnd validates the string whose contents start at b[i] (after the
// opening quote) and returns the offset just past its closing quote, or
// where it went wrong ([stringRun], with the end of b as the end of the
// input).
func stringEnd(b []byte, i int) (int, bool) {
	j, closed, _ := stringRun(b, i)
	return j, closed
}

// special has the high bit set in the lowest byte of w that is '"', '\\'
// or below 0x20 (bits above it may be set too: the lowest is exact).
func special(w uint64) uint64 {
	const lo, lo7, hi = 0x0101010101010101, 0x7F7F7F7F7F7F7F7F, 0x8080808080808080
	q := w ^ (lo * '"')
	s := w ^ (lo * '\\')
	quote := ^(((q & lo7) + lo7) | q) & hi
	slash := ^(((s & lo7) + lo7) | s) & hi
	control := (w - lo*0x20) & ^w & hi
	return quote | slash | control
}

func hex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// numberEnd validates the number starting at b[i] and returns the offset
// just past it, or where it went wrong.
func numberEnd(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || b[i+1] < '0' || b[i+1] > '9' {
			return i + 1, false
		}
		i = digits(b, i+2)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		i = digits(b, i+1)
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}
