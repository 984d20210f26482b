package tokens

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// Character classes used by the pre-tokenizers. One byte per rune keeps the
// hot loop to a table load; the bits mirror the Unicode properties named in
// tiktoken's split patterns.
const (
	clL       = 1 << iota // \p{L}
	clN                   // \p{N}
	clS                   // \s (Unicode White_Space)
	clA                   // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] (o200k "upper" run)
	clB                   // [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k "lower" run)
	clM                   // \p{M}
	clNL                  // \r or \n
	clInvalid             // an ill-formed UTF-8 sequence, read as U+FFFD
)

// clPunct is the complement class [^\s\p{L}\p{N}]: a rune is punctuation when
// none of these bits is set.
const clPunct = clL | clN | clS

// clNotPrefix is what the optional leading [^\r\n\p{L}\p{N}] must not be.
const clNotPrefix = clL | clN | clNL

var (
	asciiClass [256]uint8     // only the ASCII half is used; 256 spares a bounds check
	bmpClass   [1 << 16]uint8 // filled by initClasses; 64 KiB covers the BMP
)

func init() {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		asciiClass[r] = classOf(r)
	}
}

var classesOnce sync.Once

// initClasses fills the BMP table. It runs with the first encoding load, in
// the background when Preload is used, so a process that never counts never
// pays for it.
func initClasses() {
	classesOnce.Do(func() {
		for r := rune(0); r < 1<<16; r++ {
			bmpClass[r] = classOf(r)
		}
	})
}

func classOf(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= clL
	}
	if unicode.IsNumber(r) {
		c |= clN
	}
	if unicode.Is(unicode.White_Space, r) {
		c |= clS
	}
	if unicode.IsMark(r) {
		c |= clM | clA | clB
	}
	if unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
		c |= clA
	}
	if unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
		c |= clB
	}
	if r == '\r' || r == '\n' {
		c |= clNL
	}
	return c
}

// decode reads the rune at b[i]. An ill-formed sequence is consumed as one
// maximal subpart (the WHATWG/Unicode replacement rule that Node's and
// Python's UTF-8 decoders follow) and classified as U+FFFD, which is \p{So}.
func decode(b []byte, i int) (size int, class uint8) {
	c := b[i]
	if c >= utf8.RuneSelf {
		return decodeMulti(b, i)
	}
	return 1, asciiClass[c]
}

// decodeMulti is decode for a non-ASCII lead byte, kept apart so decode
// stays small enough to inline.
func decodeMulti(b []byte, i int) (size int, class uint8) {
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n == 1 {
		return maximalSubpart(b[i:]), clInvalid
	}
	if r < 1<<16 {
		return n, bmpClass[r]
	}
	return n, classOf(r)
}

// maximalSubpart returns the length of the longest prefix of s that starts a
// well-formed UTF-8 sequence without completing it (at least 1). s must begin
// with an ill-formed sequence.
func maximalSubpart(s []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for ; n <= need && n < len(s); n++ {
		if s[n] < lo || s[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// replacementChar is U+FFFD in UTF-8: what an ill-formed sequence counts as.
const replacementChar = "\uFFFD"

// appendReplaced appends piece to dst with every ill-formed sequence replaced
// by U+FFFD, the text the reference tokenizer sees after decoding.
func appendReplaced(dst, piece []byte) []byte {
	for i := 0; i < len(piece); {
		if piece[i] < utf8.RuneSelf {
			dst = append(dst, piece[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(piece[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, replacementChar...)
			i += maximalSubpart(piece[i:])
			continue
		}
		dst = append(dst, piece[i:i+n]...)
		i += n
	}
	return dst
}
