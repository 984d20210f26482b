package explore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// maxIndexDepth bounds the nesting indexJSON accepts: each level costs a
// frame, and a file of millions of brackets (text an upstream may send;
// the proxy stores what is past jsonscan.MaxDepth as text) would cost
// gigabytes. Ten times encoding/json's limit, so that files written by
// others that go a little past it still open: 100,000 frames are a few MB.
const maxIndexDepth = 100_000

// indexJSON validates b as one JSON value (RFC 8259) in a single iterative
// pass and returns the member lists of every container of at least minSize
// bytes, keyed by start offset, so that later calls never scan a big
// container again. On a syntax error it returns the offset and a message
// instead. Nesting depth is bounded only by memory.
//
// It is a scanner of its own, not jsonscan's, on purpose: validating,
// placing the model's error message and indexing every big container
// happen in the one pass over a file of up to hundreds of MB, which is
// what the first call on a file pays (BenchmarkFirstTouch, 100 MB);
// jsonscan.Check and then a walk would read it twice. It is iterative,
// like jsonscan, so depth costs memory, not stack.
func indexJSON(b []byte, minSize int) (map[int][]child, int, string) {
	type frame struct {
		start int
		obj   bool
		key   span // key of this container in its parent object
		kids  []child
	}
	var (
		stack []frame
		big   = map[int][]child{}
		key   span // pending key in the current object
	)
	// emit records a finished value in the enclosing container.
	emit := func(v span) {
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			top.kids = append(top.kids, child{key: key, val: v})
		}
	}
	const (
		wantValue      = iota // a value must come
		wantValueOrEnd        // after '[': value or ']'
		wantKeyOrEnd          // after '{': key or '}'
		wantKey               // after ',' in an object
		wantColon
		wantCommaOrEnd
	)
	state := wantValue
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) {
		return nil, i, "unexpected end of input"
	}
	for i < len(b) {
		c := b[i]
		switch state {
		case wantKeyOrEnd, wantKey:
			if c == '}' && state == wantKeyOrEnd {
				goto closeContainer
			}
			if c != '"' {
				return nil, i, fmt.Sprintf("expected a string key, found %q", c)
			}
			e, msg := scanString(b, i)
			if msg != "" {
				return nil, e, msg
			}
			key = span{i, e}
			i = jsonscan.SkipSpace(b, e)
			state = wantColon
			continue
		case wantColon:
			if c != ':' {
				return nil, i, fmt.Sprintf("expected ':' after object key, found %q", c)
			}
			i = jsonscan.SkipSpace(b, i+1)
			state = wantValue
			continue
		case wantCommaOrEnd:
			top := &stack[len(stack)-1]
			switch {
			case c == ',':
				i = jsonscan.SkipSpace(b, i+1)
				if top.obj {
					state = wantKey
				} else {
					state = wantValue
				}
				continue
			case c == '}' && top.obj, c == ']' && !top.obj:
				goto closeContainer
			}
			return nil, i, fmt.Sprintf("expected ',' or a closing bracket, found %q", c)
		case wantValueOrEnd:
			if c == ']' {
				goto closeContainer
			}
		}
		// A value starts at b[i].
		switch c {
		case '{', '[':
			if len(stack) == maxIndexDepth {
				return nil, i, fmt.Sprintf("nested deeper than %d levels", maxIndexDepth)
			}
			var kids []child
			if n := len(stack); n < cap(stack) {
				kids = stack[:n+1][n].kids[:0] // reuse this depth's buffer
			}
			stack = append(stack, frame{start: i, obj: c == '{', key: key, kids: kids})
			key = span{}
			i = jsonscan.SkipSpace(b, i+1)
			if c == '{' {
				state = wantKeyOrEnd
			} else {
				state = wantValueOrEnd
			}
			continue
		case '"':
			e, msg := scanString(b, i)
			if msg != "" {
				return nil, e, msg
			}
			emit(span{i, e})
			i = e
		case 't', 'f', 'n':
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
				return nil, i, "invalid literal (expected true, false or null)"
			}
			emit(span{i, i + len(lit)})
			i += len(lit)
		default:
			e, msg := scanNumber(b, i)
			if msg != "" {
				return nil, e, msg
			}
			emit(span{i, e})
			i = e
		}
		goto afterValue

	closeContainer:
		{
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			end := i + 1
			if end-f.start >= minSize {
				big[f.start] = slices.Clip(slices.Clone(f.kids))
			}
			// f's buffer stays in the popped slot for the next container at
			// this depth.
			key = f.key
			emit(span{f.start, end})
			i = end
		}

	afterValue:
		i = jsonscan.SkipSpace(b, i)
		if len(stack) == 0 {
			if i != len(b) {
				return nil, i, "unexpected data after the top-level value"
			}
			return big, 0, ""
		}
		state = wantCommaOrEnd
	}
	return nil, len(b), "unexpected end of input"
}

// strClass marks bytes that end the fast path inside a string.
var strClass = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return
}()

// scanString validates the string starting at b[i] == '"' and returns the
// offset just past it, or the error offset and message.
func scanString(b []byte, i int) (int, string) {
	i++
	for i < len(b) {
		// Skip 8 plain bytes at a time: the lowest flagged byte of the
		// word is exact, so the scalar code below takes over there.
		for i+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[i:])
			if t := hasZero(x^0x2222222222222222) | hasZero(x^0x5c5c5c5c5c5c5c5c) | hasLess32(x); t != 0 {
				i += bits.TrailingZeros64(t) / 8
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		if !strClass[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, ""
		case c < 0x20:
			return i, "control character in string"
		}
		// Backslash escape.
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				return len(b), "unexpected end of input in \\u escape"
			}
			for _, h := range b[i+2 : i+6] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return i, "invalid \\u escape"
				}
			}
			i += 6
		default:
			return i, "invalid escape in string"
		}
	}
	return len(b), "unexpected end of input in string"
}

const lo7, hi7 = 0x0101010101010101, 0x8080808080808080

// hasZero flags (high bit) the bytes of x that are zero; the lowest flag is
// exact, higher ones may be false positives.
func hasZero(x uint64) uint64 { return (x - lo7) & ^x & hi7 }

// hasLess32 flags the bytes of x below 0x20 (control characters), with the
// same exactness as hasZero.
func hasLess32(x uint64) uint64 { return (x - lo7*0x20) & ^x & hi7 }

// scanNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func scanNumber(b []byte, i int) (int, string) {
	start := i
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return start, "invalid character looking for a value"
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return i, "invalid number: digits expected after '.'"
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return i, "invalid number: digits expected in exponent"
		}
	}
	return i, ""
}
