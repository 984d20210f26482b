package tokens

import "math/bits"

// Gemma 3 has no pre-tokenizer that splits words: its tokenizer.json splits
// on " " only after the normalizer has replaced every " " with "▁", so each
// section between added tokens is one BPE word, as long as the line. Merging
// such a word naively is quadratic, and counting it whole defeats caching and
// parallelism. This file cuts words where the cut provably changes nothing.
//
// Pieces. BPE joins two adjacent symbols only into a token of the
// vocabulary, so if no token that a merge makes contains the characters c1
// c2 next to each other, no merge ever joins a symbol ending in c1 with one
// starting with c2: the merged token would contain c1 c2. The merges on
// either side of such a pair then never involve the other side, and each
// side's merges come in the same (rank, position) order as when that side is
// merged alone: the word's count is the sum of its pieces' counts. joinSet
// holds the pairs that do occur (33,695 of them): the generator lists them
// from the tokens the merges make, and TestGemmaJoinSet recomputes them from
// the loaded merges. Every other pair is a cut: about one character boundary
// in five in JSON, two in five in Go code, over half in CJK text, so pieces
// are short and repeat, and the piece cache answers most of them.
//
// Chunks for parallel counting. A cut before b[p] must also leave the added
// tokens where they were. It is safe when b[p] is '\n' and b[p-1] is not:
// the only added tokens holding a '\n' are runs of '\n', so none spans p,
// the left-to-right scan reaches p in the whole as in the part that starts
// there, and the section before p ends at p either way. It is also safe
// between two ASCII characters that are adjacent in no added token (nothing
// spans p) and form a pair outside joinSet (the section is cut there
// anyway). TestGemmaAddedTokenShapes checks the first claim on the embedded
// vocabulary, FuzzGemmaCut the rule on arbitrary input.

// joinCode is the character a pair is looked up with: BPE sees every " " as
// "▁" (U+2581), and the raw text may hold either; both are 0x20 here. A
// token holding a literal " " (never formed, as the text has none) would
// only add pairs, which removes cuts and keeps counts exact.
func joinCode(r rune) rune {
	if r == '▁' {
		return ' '
	}
	return r
}

// joinSet is a set of character pairs: a bitmap for two ASCII characters, a
// small open-addressing hash set for the rest.
type joinSet struct {
	ascii [128][2]uint64
	slots []uint64 // c1<<21 | c2, +1 so that 0 is empty
	mask  uint64
}

func newJoinSet() joinSet {
	return joinSet{slots: make([]uint64, 1<<17), mask: 1<<17 - 1}
}

func (j *joinSet) add(a, b rune) {
	if a < 128 && b < 128 {
		j.ascii[a][b>>6] |= 1 << (b & 63)
		return
	}
	k := uint64(a)<<21 | uint64(b) + 1
	for i := joinHash(k) & j.mask; ; i = (i + 1) & j.mask {
		switch j.slots[i] {
		case k:
			return
		case 0:
			j.slots[i] = k
			return
		}
	}
}

func (j *joinSet) has(a, b rune) bool {
	if a < 128 && b < 128 {
		return j.ascii[a][b>>6]&(1<<(b&63)) != 0
	}
	k := uint64(a)<<21 | uint64(b) + 1
	for i := joinHash(k) & j.mask; ; i = (i + 1) & j.mask {
		switch j.slots[i] {
		case k:
			return true
		case 0:
			return false
		}
	}
}

func joinHash(k uint64) uint64 {
	h := k * 0x9E3779B97F4A7C15
	return h ^ bits.RotateLeft64(h, 29)
}

// gemmaCut reports whether the text may be cut before b[p] for parallel
// counting (0 < p < len(b)).
func (g *gemma) gemmaCut(b []byte, p int) bool {
	c1, c2 := b[p-1], b[p]
	if c2 == '\n' {
		return c1 != '\n'
	}
	if c1 >= 0x80 || c2 >= 0x80 || g.added.adjacent(c1, c2) {
		return false
	}
	return !g.join.has(joinCode(rune(c1)), joinCode(rune(c2)))
}

// nextGemmaCut returns the first safe cut at or after p, or len(b).
func (g *gemma) nextGemmaCut(b []byte, p int) int {
	if p < 1 {
		p = 1
	}
	for ; p < len(b); p++ {
		if g.gemmaCut(b, p) {
			return p
		}
	}
	return len(b)
}

func (g *gemma) safe(b []byte, p int) bool { return g.gemmaCut(b, p) }
