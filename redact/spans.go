package redact

import "slices"

// What a scan found, merged and written out in text order.

// span is a secret found at src[start:end].
type span struct {
	start, end int
	rule       int
	fp         [4]byte
}

// flush emits, in order, the spans starting before limit, merging the
// ones that overlap: a merged span has the kind of its first (longest)
// span.
func (r *Redactor) flush(st *state, src []byte, limit int) {
	if len(st.spans) == 0 {
		return
	}
	slices.SortFunc(st.spans, func(a, b span) int {
		if a.start != b.start {
			return a.start - b.start
		}
		if a.end != b.end {
			return b.end - a.end
		}
		return a.rule - b.rule // the same bytes: the kind earlier in the table
	})
	n := 0
	for _, s := range st.spans {
		if s.start >= limit {
			break
		}
		n++
		if st.hasOpen && s.start < st.open.end {
			st.open.end = max(st.open.end, s.end)
			continue
		}
		r.emitOpen(st, src)
		st.open, st.hasOpen = s, true
	}
	st.spans = append(st.spans[:0], st.spans[n:]...)
}

// emitOpen reports the open span and, in mask mode, writes it out.
func (r *Redactor) emitOpen(st *state, src []byte) {
	if !st.hasOpen {
		return
	}
	s := st.open
	st.hasOpen = false
	if s.start < st.done { // joins one already reported: only the rest
		if s.end <= st.done {
			return
		}
		s.start = st.done
	}
	st.done = s.end
	kind := r.list[s.rule].id
	rep := &st.rep
	if rep.Counts == nil {
		rep.Counts = map[string]int{}
	}
	rep.Counts[kind]++
	rep.Total++
	if len(rep.Findings) < r.maxFindings {
		rep.Findings = append(rep.Findings, Finding{Kind: kind, Start: s.start, End: s.end, Fingerprint: string(s.fp[:])})
	} else {
		rep.More++
	}
	if r.mode != Mask {
		return
	}
	st.out = append(st.out, src[st.copied:s.start]...)
	st.out = appendMask(st.out, kind, s.fp)
	st.copied, st.masked = s.end, true
}
