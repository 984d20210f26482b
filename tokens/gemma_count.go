package tokens

import (
	"sync/atomic"
	"unicode/utf8"
)

// The Gemma 3 count, from the outside in: the text is scanned for added
// tokens (gemma_added.go), each counting one; the sections between them are
// cut into pieces where no merge can cross (gemma_boundary.go); each piece
// is normalized (" " → "▁") and merged (gemma_bpe.go), unless the
// per-worker piece cache knows its count.

// countSeq counts b on the calling goroutine; total and limit work as in
// encoding.countSeq.
func (g *gemma) countSeq(b []byte, total *atomic.Int64, limit int64) int {
	s := g.scratch.Get().(*scratch)
	defer g.scratch.Put(s)
	valid := utf8.Valid(b)
	n, flushed, sections := 0, 0, 0
	start := 0
	for i := 0; i < len(b); {
		if !g.added.first[b[i]] {
			i++
			continue
		}
		m := g.added.match(b, i)
		if m == 0 {
			i++
			continue
		}
		if i > start {
			n += g.countSection(b[start:i], valid, s)
		}
		n++
		i += m
		start = i
		if limit > 0 {
			if sections++; sections == flushEvery {
				sections = 0
				t := total.Add(int64(n - flushed))
				flushed = n
				if t >= limit {
					return n
				}
			}
		}
	}
	if start < len(b) {
		n += g.countSection(b[start:], valid, s)
	}
	if total != nil {
		total.Add(int64(n - flushed))
	}
	return n
}

// countSection counts one section: text with no added token in it.
func (g *gemma) countSection(sec []byte, valid bool, s *scratch) int {
	if !valid && !utf8.Valid(sec) {
		s.fixed = appendReplaced(s.fixed[:0], sec)
		sec = s.fixed
	}
	n, from := 0, 0
	prev := rune(-1)
	for i := 0; i < len(sec); {
		r, w := rune(sec[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRune(sec[i:])
			r = joinCode(r)
		}
		if prev >= 0 && !g.join.has(prev, r) {
			n += g.countPiece(sec[from:i], s)
			from = i
		}
		prev = r
		i += w
	}
	return n + g.countPiece(sec[from:], s)
}

// countPiece counts one piece through the piece cache, keyed by the raw
// bytes (the count is a function of them).
func (g *gemma) countPiece(p []byte, s *scratch) int {
	if len(p) > gemmaCacheKeyMax {
		return g.mergePiece(p, s)
	}
	if s.gcache == nil {
		s.gcache = new(gemmaCache)
	}
	ce := &s.gcache[hashBytes(p)&(gemmaCacheSize-1)]
	if int(ce.n) == len(p) && string(ce.key[:len(p)]) == string(p) {
		return int(ce.count)
	}
	c := g.mergePiece(p, s)
	ce.n, ce.count = uint8(len(p)), uint8(c)
	copy(ce.key[:], p)
	return c
}

// gemmaCache is the piece cache with longer keys than pieceCache: Gemma's
// pieces run across spaces, so an indented line of JSON is often one piece,
// and lines repeat.
type gemmaCache [gemmaCacheSize]gemmaCacheEntry

const (
	gemmaCacheSize   = 4096
	gemmaCacheKeyMax = 62
)

type gemmaCacheEntry struct {
	n     uint8 // key length; 0 marks an empty entry
	count uint8
	key   [gemmaCacheKeyMax]byte
}

// gemmaSmallPiece is the longest normalized piece merged with the quadratic
// loop.
const gemmaSmallPiece = 64

// mergePiece normalizes p and counts its tokens. A piece longer than
// maxPiece (a run of over 256 KiB in which every two neighbouring characters
// occur together in some token, such as a base64 blob on one line) is merged
// in windows of maxPiece bytes to bound the scratch memory, as the tiktoken
// encodings do; its count may then differ from the reference's by a few
// tokens per window.
func (g *gemma) mergePiece(p []byte, s *scratch) int {
	n := 0
	for len(p) > maxPiece {
		cut := maxPiece
		for cut > maxPiece-4 && !utf8.RuneStart(p[cut]) {
			cut--
		}
		n += g.mergeWindow(p[:cut], s)
		p = p[cut:]
	}
	return n + g.mergeWindow(p, s)
}

// mergeWindow normalizes p and counts its tokens.
func (g *gemma) mergeWindow(p []byte, s *scratch) int {
	if len(p) == 0 {
		return 0
	}
	norm := s.norm[:0]
	for _, c := range p {
		if c == ' ' {
			norm = append(norm, "▁"...)
		} else {
			norm = append(norm, c)
		}
	}
	s.norm = norm
	if len(norm) <= gemmaSmallPiece {
		return g.mergeGemmaSmall(norm, s)
	}
	return g.mergeGemmaLarge(norm, s)
}

// count counts b, in parallel when it is large, with chunks cut by
// nextGemmaCut (see [countChunked]): a section (a line) may be megabytes
// long and countSeq looks at the limit only between sections.
func (g *gemma) count(b []byte, limit int64, workers int) int {
	return countChunked(b, limit, workers, g.nextGemmaCut, g.countSeq)
}
