package redact

import (
	"bytes"
	"strings"
)

// The keyword prefilter. Every rule's match contains one of its keywords;
// the text is searched for all keywords at once and only the windows
// around hits are run through a regexp, so clean text costs a few
// [bytes.IndexByte] passes (vector instructions) and nothing more.
//
// Each keyword is found through its anchor: its rarest byte by
// [commonness]. Keywords sharing an anchor share one IndexByte pass; a
// position holding the anchor is a hit when the keyword's other bytes are
// around it. The text is searched in chunks that stay in the CPU's cache,
// so it is read from memory once whatever the number of anchors.

// chunk is the span every anchor pass covers before the next starts.
const chunk = 32 << 10

type keyword struct {
	lit    string
	anchor int   // index in lit of the byte searched for
	rules  []int // indexes of the rules it belongs to
}

// anchorSet is the keywords grouped by anchor byte.
type anchorSet struct {
	bytes []byte      // distinct anchor bytes
	kws   [][]keyword // by index in bytes
	// near[i] turns most occurrences of anchor i away with two loads: a
	// keyword may be there only if the byte after the anchor is in
	// near[i].next (keywords going on past their anchor) or the byte
	// before it in near[i].prev (keywords ending with it).
	near []*nearBytes
}

// commonness ranks a byte's frequency in tool output (JSON listings,
// logs, code), higher more common; only the order matters. Letters follow
// English frequency, capitals well below lower case, JSON punctuation
// above all.
func commonness(b byte) int {
	const lower = "etaoinsrhldcumfpgwybvkxjqz"
	const upper = "ETAOINSRHLDCUMFPGWYBVKXJQZ"
	switch {
	case b >= 'a' && b <= 'z':
		return 100 - 2*strings.IndexByte(lower, b)
	case b >= 'A' && b <= 'Z':
		return 40 - strings.IndexByte(upper, b)
	case b >= '0' && b <= '9':
		return 60
	}
	switch b {
	case '"', ' ', ':', ',', '.', '/', '\\', '{', '}', '\n', '=':
		return 200
	case '-':
		return 70
	case 'K', 'J', 'Q', 'X', 'Y', 'Z', 'V', 'W':
		return 2
	case '_':
		return 45
	case '@':
		return 5
	}
	return 30
}

// addKeyword files lit under its anchor: the rarest byte, a byte already
// used as an anchor winning a near tie (one pass less).
func (a *anchorSet) add(lit string, rule int) {
	for i, b := range a.bytes {
		for j := range a.kws[i] {
			if a.kws[i][j].lit == lit {
				a.kws[i][j].rules = append(a.kws[i][j].rules, rule)
				_ = b
				return
			}
		}
	}
	best, bestCost := 0, 1<<30
	for i := 0; i < len(lit); i++ {
		cost := 4 * commonness(lit[i])
		if bytes.IndexByte(a.bytes, lit[i]) >= 0 {
			cost -= 30
		}
		if cost < bestCost {
			best, bestCost = i, cost
		}
	}
	b := lit[best]
	k := bytes.IndexByte(a.bytes, b)
	if k < 0 {
		a.bytes = append(a.bytes, b)
		a.kws = append(a.kws, nil)
		k = len(a.bytes) - 1
	}
	a.kws[k] = append(a.kws[k], keyword{lit: lit, anchor: best, rules: []int{rule}})
	for len(a.near) < len(a.bytes) {
		a.near = append(a.near, new(nearBytes))
	}
	n := a.near[k]
	switch {
	case best+1 < len(lit):
		n.next[lit[best+1]] = true
	case best > 0:
		n.prev[lit[best-1]] = true
	default: // a one-byte keyword: every occurrence is a hit
		for c := range n.next {
			n.next[c] = true
		}
	}
}

type nearBytes struct{ next, prev [256]bool }

// hit is a keyword found at pos (its first byte) in the text.
type hit struct {
	pos int
	kw  *keyword
}

// find appends to hits every keyword occurrence whose anchor lies in
// src[from:to]; keywords may reach outside that span (up to src's ends).
func (a *anchorSet) find(hits []hit, src []byte, from, to int) []hit {
	for i, b := range a.bytes {
		kws := a.kws[i]
		near := a.near[i]
		seg := src[from:to]
		off := 0
		for {
			j := bytes.IndexByte(seg[off:], b)
			if j < 0 {
				break
			}
			p := from + off + j // the anchor's position in src
			off += j + 1
			if p+1 < len(src) && !near.next[src[p+1]] && (p == 0 || !near.prev[src[p-1]]) {
				continue
			}
			for k := range kws {
				kw := &kws[k]
				start := p - kw.anchor
				if start < 0 || start+len(kw.lit) > len(src) {
					continue
				}
				if string(src[start:start+len(kw.lit)]) == kw.lit {
					hits = append(hits, hit{pos: start, kw: kw})
				}
			}
		}
	}
	return hits
}
