package tokens

// Parallel counting cuts the text only where both pre-tokenizers provably
// end a piece, so the pieces of the parts are exactly the pieces of the
// whole and the counts add up.
//
// A cut before b[p] is safe when b[p-1] is printable ASCII other than space
// (0x21..0x7E) and b[p] is either a space or tab, or an ASCII digit with
// b[p-1] not a digit. Why, alternative by alternative:
//
//   - No piece holds both b[p-1] and b[p]. Letter runs, digit runs and
//     punctuation runs all stop at a space, tab or digit (the punctuation
//     suffix takes only \r, \n and '/'); a contraction needs a letter after
//     the apostrophe; whitespace pieces cannot hold b[p-1]; a digit run
//     cannot start at a non-digit b[p-1] and extend to b[p].
//   - No piece before p looked at b[p] to decide where it ends: every test
//     a piece ending at p makes on b[p] (letter, digit, punctuation,
//     apostrophe, \r\n/) fails both on a space/tab/digit and at the end of
//     the text. The one test that differs, the (?!\S) lookahead of
//     whitespace pieces, is never reached because b[p-1] is not whitespace.
//   - The patterns have no look-behind or anchors, so splitting from p in
//     the whole text is splitting the part that starts at p.
//
// FuzzSplitBoundary checks the rule on arbitrary input.

// safeCut reports whether the text may be cut before b[p] (0 < p < len(b)).
func safeCut(b []byte, p int) bool {
	prev := b[p-1]
	if prev < 0x21 || prev > 0x7E {
		return false
	}
	switch c := b[p]; {
	case c == ' ' || c == '\t':
		return true
	case c >= '0' && c <= '9':
		return prev < '0' || prev > '9'
	}
	return false
}

// nextCut returns the first safe cut at or after p, or len(b) if none.
func nextCut(b []byte, p int) int {
	if p < 1 {
		p = 1
	}
	for ; p < len(b); p++ {
		if safeCut(b, p) {
			return p
		}
	}
	return len(b)
}

func (e *encoding) safe(b []byte, p int) bool { return safeCut(b, p) }
