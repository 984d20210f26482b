package redact

import (
	"bytes"
	"fmt"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"slices"
	"unicode/utf8"
)

// The scan: chunk by chunk, keyword hits, each hit's window through its
// rule, the verdict checks.

// state is one scan's scratch space, pooled.
type state struct {
	hits    []hit
	spans   []span
	buf     []byte
	at      []int32
	fp      fingerprinter
	lastEnd []int // per rule: the raw end of its last match
	str     strState
	blobs   [][2]int // JSON: the "blob" string values, [start, end) raw, not scanned

	// Output.
	out     []byte
	copied  int  // src is copied to out up to here
	done    int  // the end of the last span reported
	masked  bool // out holds something
	open    span // the merged span not emitted yet
	hasOpen bool
	rep     Report
}

func (r *Redactor) scan(dst, src []byte, isJSON bool) ([]byte, Report, error) {
	if r.mode == Off {
		return src, Report{}, nil
	}
	if len(src) > r.maxBytes {
		return src, Report{}, &UnscannableError{Reason: fmt.Sprintf("%d bytes, over the scan bound of %d", len(src), r.maxBytes)}
	}
	st := r.pool.Get().(*state)
	st.out, st.copied, st.done, st.masked, st.hasOpen, st.rep = dst, 0, 0, false, false, Report{}
	for i := range st.lastEnd {
		st.lastEnd[i] = -1
	}
	st.spans = st.spans[:0]
	st.str = strState{}
	st.blobs = st.blobs[:0]
	if isJSON {
		st.blobs = blobValues(st.blobs, src)
	}
	// What makes the input unscannable is looked for chunk by chunk too,
	// while the chunk is in cache.
	nul, bad, valid := false, 0, 0
	for from := 0; from < len(src); from += chunk {
		to := min(from+chunk, len(src))
		if !nul && bytes.IndexByte(src[from:to], 0) >= 0 {
			nul = true
		}
		end := to // UTF-8 is checked up to the last character that begins in the chunk
		for k := 0; k < 3 && end < len(src) && end > valid && !utf8.RuneStart(src[end]); k++ {
			end--
		}
		if !utf8.Valid(src[valid:end]) {
			bad += invalidUTF8(src[valid:end])
		}
		valid = end
		st.hits = r.anchors.find(st.hits[:0], src, from, to)
		if len(st.hits) > 1 {
			slices.SortFunc(st.hits, func(a, b hit) int { return a.pos - b.pos })
		}
		for _, h := range st.hits {
			for _, ri := range h.kw.rules {
				r.window(st, src, ri, h.pos, len(h.kw.lit), isJSON)
			}
		}
		for _, ri := range r.keyless {
			r.keylessWindow(st, src, ri, from, to, isJSON)
		}
		if len(st.spans) > 0 {
			// Spans starting before this can no longer be joined by one
			// found later: later keywords end past to.
			r.flush(st, src, to-r.maxBack-r.maxKw-1)
		}
	}
	r.flush(st, src, len(src)+1)
	r.emitOpen(st, src)
	rep := st.rep
	// Binary-looking input was scanned like any other (the rules read
	// NUL bytes and invalid UTF-8 as bytes that end a secret): the report
	// only says what it looked like.
	switch {
	case nul:
		rep.Binary = fmt.Sprintf("binary: %d NUL bytes", bytes.Count(src, []byte{0}))
	case bad*binaryRate > len(src):
		rep.Binary = fmt.Sprintf("binary: %d bytes of invalid UTF-8 in %d", bad, len(src))
	}
	for _, b := range st.blobs {
		rep.Skipped += b[1] - b[0]
	}
	out := src
	if st.masked {
		out = append(st.out, src[st.copied:]...)
	}
	st.out, st.rep = nil, Report{}
	r.pool.Put(st)
	return out, rep, nil
}

// invalidUTF8 counts the bytes of b that are not part of a valid UTF-8
// encoding.
func invalidUTF8(b []byte) int {
	bad := 0
	for i := 0; i < len(b); {
		c, w := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && w == 1 {
			bad++
		}
		i += w
	}
	return bad
}

// blobValues appends to out the spans of src's "blob" string values: the
// base64 content of binary resources (an embedded resource in a tool
// result, a resources/read answer). They are left as they are: random
// base64 matches entropy rules and provider formats by chance, and a mask
// in it would break the binary; the text around them is scanned.
func blobValues(out [][2]int, src []byte) [][2]int {
	key := []byte(`"blob"`)
	for i := 0; ; {
		j := bytes.Index(src[i:], key)
		if j < 0 {
			return out
		}
		i += j + len(key)
		k := i
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\r' || src[k] == '\n') {
			k++
		}
		if k >= len(src) || src[k] != ':' {
			continue
		}
		k++
		for k < len(src) && (src[k] == ' ' || src[k] == '\t' || src[k] == '\r' || src[k] == '\n') {
			k++
		}
		if k >= len(src) || src[k] != '"' {
			continue
		}
		end := jsonscan.StringEnd(src, k)
		out = append(out, [2]int{k, end})
		i = end
	}
}

// inBlob reports whether [start, end) overlaps one of blobs (sorted).
func inBlob(blobs [][2]int, start, end int) bool {
	for _, b := range blobs {
		if start < b[1] && end > b[0] {
			return true
		}
	}
	return false
}

// window runs rule ri on the text around a keyword found at raw offset
// kw (klen bytes) and records what it finds.
func (r *Redactor) window(st *state, src []byte, ri, kw, klen int, isJSON bool) {
	ru := &r.list[ri]
	if kw < st.lastEnd[ri] {
		return // inside its last match
	}
	if ru.pre != nil && !ru.pre(src, kw) {
		return
	}
	back := ru.back
	if ru.anchored != nil {
		back = ru.lead
	}
	ws := max(0, kw-back)
	if isJSON {
		if q := quoteBefore(src, ws, kw); q >= 0 {
			ws = q + 1
		} else {
			ws = alignStart(src, ws)
		}
	}
	for fwd := ru.fwd; ; fwd *= 4 {
		we := min(len(src), kw+klen+fwd)
		cut := we < len(src) && fwd < maxGrow // the match may go on
		if isJSON {
			if q := quoteAfter(src, kw, we); q >= 0 {
				we, cut = q, false
			}
		}
		if !r.run(st, src, ri, ws, we, kw, klen, isJSON, cut) {
			return
		}
	}
}

// keylessWindow runs a keyword-less extra rule over src[from:to] (and
// maxUnkeyed bytes on either side, so that a match starting in it is seen
// whole).
func (r *Redactor) keylessWindow(st *state, src []byte, ri, from, to int, isJSON bool) {
	ws, we := max(0, from-maxUnkeyed), min(len(src), to+maxUnkeyed)
	if isJSON {
		ws = alignStart(src, ws)
	}
	r.run(st, src, ri, ws, we, -1, 0, isJSON, false)
}

// run matches rule ri on src[ws:we] (decoded in JSON). kw ≥ 0 keeps only
// matches around the keyword at kw; kw < 0 keeps matches starting before
// we-maxUnkeyed (the rest are seen by the next window). With cut (the
// window ends before the text does) a match reaching the window's end
// may be longer: run records nothing and returns true, for a longer
// window.
func (r *Redactor) run(st *state, src []byte, ri, ws, we, kw, klen int, isJSON, cut bool) (more bool) {
	ru := &r.list[ri]
	text := src[ws:we]
	var at []int32
	if isJSON && bytes.IndexByte(text, '\\') >= 0 {
		st.buf, st.at = decodeWindow(st.buf[:0], st.at[:0], text, ws)
		text, at = st.buf, st.at
	}
	raw := func(i int) int { // decoded offset to raw offset
		if at == nil {
			return ws + i
		}
		return int(at[i])
	}
	covers := func(m []int) bool {
		ms, me := raw(m[0]), raw(m[1])
		return !(kw >= 0 && ru.keywordInMatch && (ms >= kw+klen || me <= kw))
	}
	var ms [][]int
	if ru.anchored != nil && kw >= 0 {
		// The leftmost match within the lead (group 1 onwards is the
		// pattern's own match and groups); when it is another keyword's,
		// all of them, as without the anchor (rare: two within a lead).
		var m []int
		if ru.match != nil {
			m = ru.match(text, ru.lead)
		} else if m = ru.anchored.FindSubmatchIndex(text); m != nil {
			m = m[2:]
		}
		if m != nil {
			if covers(m) {
				ms = [][]int{m}
			} else {
				ms = ru.re.FindAllSubmatchIndex(text, -1)
			}
		}
	} else {
		ms = ru.re.FindAllSubmatchIndex(text, -1)
	}
	if cut {
		for _, m := range ms {
			if m[1] == len(text) && covers(m) {
				return true
			}
		}
	}
	for _, m := range ms {
		if !covers(m) {
			continue
		}
		if kw < 0 && raw(m[0]) >= we-maxUnkeyed && we < len(src) {
			continue
		}
		gs, ge := m[0], m[1]
		if ru.group > 0 {
			gs, ge = m[2*ru.group], m[2*ru.group+1]
			if gs < 0 || gs == ge {
				continue
			}
		}
		secret := text[gs:ge]
		rs, re := raw(gs), raw(ge)
		if !r.keep(st, src, ru, secret, rs, re, isJSON) {
			continue
		}
		if inBlob(st.blobs, rs, re) {
			continue // base64 of binary content: not text a credential is read in
		}
		st.lastEnd[ri] = max(st.lastEnd[ri], re)
		st.spans = append(st.spans, span{start: rs, end: re, rule: ri, fp: st.fp.sum(secret)})
	}
	return false
}

// keep reports whether a match is a secret to report: entropy enough,
// not allowed, not a mask, and (JSON) inside a string without an
// unescaped quote.
func (r *Redactor) keep(st *state, src []byte, ru *rule, secret []byte, rs, re int, isJSON bool) bool {
	if ru.entropy > 0 && entropy(secret) < ru.entropy {
		return false
	}
	if bytes.Contains(secret, []byte(maskPrefix)) && maskRe.Match(secret) {
		return false
	}
	for _, a := range ru.allow {
		if a.Match(secret) {
			return false
		}
	}
	for _, a := range r.allow {
		if a.Match(secret) {
			return false
		}
	}
	if isJSON {
		if quoteAfter(src, rs, re) >= 0 {
			return false // crosses a string's end (a keyword-less pattern)
		}
		if structural(src[rs:re]) && !st.str.inString(src, rs) {
			return false
		}
	}
	return true
}
