package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Stream is [Scan] for input that arrives in pieces: each [Stream.Write]
// validates what it is given, so that when the last piece is in only that
// piece is left to check. The verdict, the error and the top-level members
// (as offsets) are [Scan]'s. The zero value is ready; a Stream is for one
// input.
type Stream struct {
	st    state
	sub   uint8 // string: escape progress; number: its state; literal: bytes matched
	lit   string
	isKey bool // the string being read is a key

	stack []uint64 // open containers, a bit each (1: object)
	depth int
	off   int // offset of the next byte

	// The top-level member being read: its key (copied, as it may arrive
	// in pieces) once its colon has passed, and where its value starts.
	key      []byte
	keyStart int
	inMember bool
	valueAt  int

	members []Member
	err     *Error

	// Inner, when set before the first Write, names a top-level member
	// whose value's own members are recorded too, when it is an object
	// ([Stream.Inner]): what a reader needs of a JSON-RPC message's
	// result (its resultType) without walking it again. (A key written
	// with escapes is not recognised: the caller then walks.)
	Inner string

	inInner     bool // the top-level member being read is Inner, an object
	innerKey    int  // start of the inner member key being read
	innerKeyEnd int
	innerMember bool // an inner member's colon has passed
	innerAt     int  // where its value starts (-1: not yet)
	inner       []Member
	innerDone   bool // an Inner object ended: inner holds its members
}

// Member is a top-level member found by a [Stream]: the key's bytes are
// input[KeyStart:KeyEnd] (without quotes), the value's input[ValueStart:ValueEnd].
type Member struct {
	KeyStart, KeyEnd, ValueStart, ValueEnd int
}

type state uint8

const (
	stValue     state = iota // a value must start (whitespace first)
	stFirstItem              // after '[': a value or ']'
	stFirstKey               // after '{': a key or '}'
	stKey                    // after ',' in an object: a key
	stColon                  // after a key: ':'
	stAfter                  // after a value: ',' or the container's end
	stString                 // in a string (sub: 0, 1 after '\\', 2..5 hex digits read of \u)
	stNumber                 // in a number (sub: numState)
	stLiteral                // in true, false or null (sub: bytes matched)
	stEnd                    // the top-level value ended: whitespace only
	stFailed
)

// Number states: where a number is after the bytes so far.
const (
	nMinus = iota // "-": a digit must follow
	nZero         // a leading 0: done, or '.', 'e'
	nInt          // digits
	nDot          // '.': a digit must follow
	nFrac         // fraction digits
	nE            // 'e': a sign or digit must follow
	nESign        // 'e' and a sign: a digit must follow
	nExp          // exponent digits
)

func (s *Stream) fail(err error) {
	s.err = &Error{Err: err, Offset: s.off}
	if s.inMember {
		s.err.Member = s.key
	}
	s.st = stFailed
}

// Write validates p, the next piece of the input. It never fails: an
// error is kept for [Stream.Close], and what follows it is ignored.
func (s *Stream) Write(p []byte) (int, error) {
	i := 0
	for i < len(p) && s.st != stFailed {
		switch s.st {
		case stString:
			i = s.inString(p, i)
			continue
		case stNumber:
			if s.number(p[i]) {
				i++
				s.off++
				continue
			}
			// The number ended before p[i], which is read again after it.
			if s.sub == nMinus || s.sub == nDot || s.sub == nE || s.sub == nESign {
				s.fail(ErrInvalid)
				continue
			}
			s.valueEnded()
			continue
		case stLiteral:
			if p[i] != s.lit[s.sub] {
				s.fail(ErrInvalid)
				continue
			}
			i++
			s.off++
			if s.sub++; int(s.sub) == len(s.lit) {
				s.valueEnded()
			}
			continue
		}
		c := p[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			s.off++
			continue
		}
		switch s.st {
		case stValue, stFirstItem:
			if s.st == stFirstItem && c == ']' {
				s.close()
				break
			}
			s.value(c)
		case stFirstKey, stKey:
			switch {
			case c == '}' && s.st == stFirstKey:
				s.close()
			case c == '"':
				s.st, s.sub, s.isKey = stString, 0, true
				if s.depth == 1 {
					s.key, s.keyStart = s.key[:0], s.off+1
				} else if s.depth == 2 && s.inInner {
					s.innerKey = s.off + 1
				}
			default:
				s.fail(ErrInvalid)
				continue
			}
		case stColon:
			if c != ':' {
				s.fail(ErrInvalid)
				continue
			}
			s.st = stValue
			if s.depth == 1 {
				s.inMember, s.valueAt = true, -1
			} else if s.depth == 2 && s.inInner {
				s.innerMember, s.innerAt = true, -1
			}
		case stAfter:
			obj := s.stack[(s.depth-1)/64]>>((s.depth-1)%64)&1 == 1
			switch {
			case c == ',' && obj:
				s.st = stKey
			case c == ',':
				s.st = stValue
			case c == '}' && obj, c == ']' && !obj:
				s.close()
			default:
				s.fail(ErrInvalid)
				continue
			}
		case stEnd:
			s.fail(ErrInvalid)
			continue
		}
		i++
		s.off++
	}
	return len(p), nil
}

// value starts the value whose first byte is c, at s.off.
func (s *Stream) value(c byte) {
	if s.depth == 1 && s.inMember && s.valueAt < 0 {
		s.valueAt = s.off
		if s.Inner != "" && string(s.key) == s.Inner {
			// Recorded afresh (a repeated key's last value is the one a
			// decoder keeps), when an object.
			s.inInner, s.inner, s.innerDone = c == '{', s.inner[:0], false
		}
	}
	if s.depth == 2 && s.innerMember && s.innerAt < 0 {
		s.innerAt = s.off
	}
	switch c {
	case '{', '[':
		if s.depth == MaxDepth {
			s.fail(ErrTooDeep)
			return
		}
		if s.depth%64 == 0 && s.depth/64 == len(s.stack) {
			s.stack = append(s.stack, 0)
		}
		w := &s.stack[s.depth/64]
		if c == '{' {
			*w |= 1 << (s.depth % 64)
			s.st = stFirstKey
		} else {
			*w &^= 1 << (s.depth % 64)
			s.st = stFirstItem
		}
		s.depth++
	case '"':
		s.st, s.sub, s.isKey = stString, 0, false
	case 't':
		s.st, s.lit, s.sub = stLiteral, "true", 1
	case 'f':
		s.st, s.lit, s.sub = stLiteral, "false", 1
	case 'n':
		s.st, s.lit, s.sub = stLiteral, "null", 1
	case '-':
		s.st, s.sub = stNumber, nMinus
	case '0':
		s.st, s.sub = stNumber, nZero
	default:
		if c >= '1' && c <= '9' {
			s.st, s.sub = stNumber, nInt
			return
		}
		s.fail(ErrInvalid)
	}
}

// number takes c as the next byte of the number, or reports that c is not
// part of it.
func (s *Stream) number(c byte) bool {
	digit := c >= '0' && c <= '9'
	switch s.sub {
	case nMinus:
		switch {
		case c == '0':
			s.sub = nZero
		case digit:
			s.sub = nInt
		default:
			return false
		}
	case nZero, nInt, nFrac:
		switch {
		case digit && s.sub != nZero:
		case c == '.' && s.sub != nFrac:
			s.sub = nDot
		case c == 'e' || c == 'E':
			s.sub = nE
		default:
			return false
		}
	case nDot:
		if !digit {
			return false
		}
		s.sub = nFrac
	case nE:
		switch {
		case c == '+' || c == '-':
			s.sub = nESign
		case digit:
			s.sub = nExp
		default:
			return false
		}
	case nESign, nExp:
		if !digit {
			return false
		}
		s.sub = nExp
	}
	return true
}

// close ends the innermost container at s.off (its closing byte).
func (s *Stream) close() {
	s.depth--
	s.off++ // the closing byte is part of the value that ends
	s.valueEnded()
	s.off--
}

// valueEnded: a value ended just before s.off.
func (s *Stream) valueEnded() {
	if s.depth == 2 && s.innerMember {
		s.inner = append(s.inner, Member{KeyStart: s.innerKey, KeyEnd: s.innerKeyEnd, ValueStart: s.innerAt, ValueEnd: s.off})
		s.innerMember = false
	}
	if s.depth == 1 && s.inMember {
		s.members = append(s.members, Member{KeyStart: s.keyStart, KeyEnd: s.keyStart + len(s.key), ValueStart: s.valueAt, ValueEnd: s.off})
		s.inMember = false
		if s.inInner {
			s.inInner, s.innerDone = false, true
		}
	}
	if s.depth == 0 {
		s.st = stEnd
	} else {
		s.st = stAfter
	}
}

// inString reads string bytes from p[i] and returns where it stopped.
func (s *Stream) inString(p []byte, i int) int {
	start := i
	i = s.stringBytes(p, i)
	if s.isKey && s.depth == 1 && s.st != stFailed {
		end := i
		if s.st == stColon {
			end-- // the closing quote
		}
		s.key = append(s.key, p[start:end]...)
	}
	return i
}

func (s *Stream) stringBytes(p []byte, i int) int {
	for i < len(p) {
		if s.sub == 0 {
			j, closed, bad := stringRun(p, i)
			s.off += j - i
			i = j
			switch {
			case closed:
				if s.isKey {
					s.st = stColon
					if s.depth == 2 && s.inInner {
						s.innerKeyEnd = s.off - 1 // the closing quote
					}
				} else {
					s.valueEnded()
				}
				return i
			case bad:
				s.fail(ErrInvalid)
				return i
			case i >= len(p):
				return i
			}
			// An escape p cuts short: byte by byte, below.
		}
		c := p[i]
		switch {
		case s.sub == 1:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.sub = 0
			case 'u':
				s.sub = 2
			default:
				s.fail(ErrInvalid)
				return i
			}
		case s.sub >= 2:
			if !hex(c) {
				s.fail(ErrInvalid)
				return i
			}
			if s.sub++; s.sub == 6 {
				s.sub = 0
			}
		default: // the backslash stringRun stopped at
			s.sub = 1
		}
		i++
		s.off++
	}
	return i
}

// stringRun validates string contents from p[i] as far as p goes and
// returns where it stopped: past the closing quote (closed), at a fault
// (bad), at the end of p, or at the backslash of an escape that p cuts
// short (neither). Eight bytes at a time: a word with no quote, backslash
// or control character is skipped whole, and in one with some, each is
// handled by its bit (JSON held as a string has an escape every few
// bytes).
func stringRun(p []byte, i int) (j int, closed, bad bool) {
	for i+8 <= len(p) {
		m := special(binary.LittleEndian.Uint64(p[i:]))
		next := i + 8
		for m != 0 {
			q := i + bits.TrailingZeros64(m)>>3
			switch c := p[q]; {
			case c == '"':
				return q + 1, true, false
			case c < 0x20:
				return q, false, true
			}
			n, ok := 2, true
			if q+1 >= len(p) || p[q+1] != '"' { // most often \" (JSON held as text)
				n, ok = escapeIn(p, q)
			}
			switch {
			case n == 0 && ok:
				return q, false, false
			case !ok:
				return q, false, true
			}
			if q+n >= i+8 {
				next = q + n
				break
			}
			m &= ^uint64(0) << (8 * (q + n - i))
		}
		i = next
	}
	for i < len(p) {
		switch c := p[i]; {
		case c == '"':
			return i + 1, true, false
		case c < 0x20:
			return i, false, true
		case c == '\\':
			n, ok := escapeIn(p, i)
			switch {
			case n == 0 && ok:
				return i, false, false
			case !ok:
				return i, false, true
			}
			i += n
		default:
			i++
		}
	}
	return i, false, false
}

// escapeIn is the length of the escape at p[q] == '\\', or 0 and true when
// p ends before it does (and nothing in it so far is wrong), or false.
func escapeIn(p []byte, q int) (int, bool) {
	if q+1 >= len(p) {
		return 0, true
	}
	switch p[q+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, true
	case 'u':
		for k := q + 2; k < q+6; k++ {
			if k >= len(p) {
				return 0, true
			}
			if !hex(p[k]) {
				return 0, false
			}
		}
		return 6, true
	}
	return 0, false
}

// Close ends the input and returns the top-level members (of an object)
// and the verdict: nil, or an [*Error] as [Scan] gives. With an error, the
// members are those that ended before the fault, as [Scan] reports them.
func (s *Stream) Close() ([]Member, error) {
	if s.st == stNumber && (s.sub == nZero || s.sub == nInt || s.sub == nFrac || s.sub == nExp) {
		s.valueEnded()
	}
	if s.st != stEnd && s.st != stFailed {
		s.fail(ErrInvalid)
	}
	if s.err != nil {
		return s.members, s.err
	}
	return s.members, nil
}

// InnerMembers are the members of the top-level member named
// [Stream.Inner], as offsets into the input like [Member]'s, once the input
// is closed without error; ok is false when there is no such member, its
// value is not an object, or the input did not validate.
func (s *Stream) InnerMembers() (members []Member, ok bool) {
	if s.err != nil || s.st != stEnd || !s.innerDone {
		return nil, false
	}
	return s.inner, true
}

// Members is [Scan] with the members as offsets into b.
func Members(b []byte) ([]Member, error) {
	var out []Member
	err := Scan(b, func(k, v []byte) {
		// Sub-slices of b that run to its capacity: where they start is
		// what b's capacity has that theirs lacks.
		ks, vs := cap(b)-cap(k), cap(b)-cap(v)
		out = append(out, Member{KeyStart: ks, KeyEnd: ks + len(k), ValueStart: vs, ValueEnd: vs + len(v)})
	})
	return out, err
}
