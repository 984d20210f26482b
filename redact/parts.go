package redact

import "sort"

// Parts scans text that comes cut into parts — a result's text items,
// which a client shows one after the other — for the secrets that cross
// a cut: each part alone holds only a piece (a token's prefix at the end
// of one item, its body at the start of the next), which no scan of one
// part finds, while a reader joining them sees the whole. Secrets inside
// one part are not its business ([Redactor.JSON] and [Redactor.Text]
// find those): the report counts the crossing ones only.
//
// In [Mask] mode a crossing secret is cut out of every part it touches
// and its mask put where it begins; the parts returned are fresh where
// changed, parts itself otherwise. In [Flag] and [Off] modes parts is
// returned as it is. The error is [Redactor.Text]'s on the joined text.
func (r *Redactor) Parts(parts [][]byte) ([][]byte, Report, error) {
	if len(parts) < 2 || r.mode == Off {
		return parts, Report{}, nil
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	joined := make([]byte, 0, n)
	starts := make([]int, len(parts)+1)
	for i, p := range parts {
		starts[i] = len(joined)
		joined = append(joined, p...)
	}
	starts[len(parts)] = len(joined)
	_, all, err := r.With(Flag).Text(nil, joined)
	if err != nil {
		return parts, Report{}, err
	}
	partOf := func(off int) int { return sort.Search(len(parts), func(i int) bool { return starts[i+1] > off }) }
	var crossing []Finding
	for _, f := range all.Findings {
		if partOf(f.Start) != partOf(f.End-1) {
			crossing = append(crossing, f)
		}
	}
	rep := Report{Findings: crossing}
	if len(crossing) == 0 {
		return parts, rep, nil
	}
	rep.Counts = map[string]int{}
	for _, f := range crossing {
		rep.Counts[f.Kind]++
		rep.Total++
	}
	if r.mode != Mask {
		return parts, rep, nil
	}
	out := make([][]byte, len(parts))
	copy(out, parts)
	// Each part is rebuilt from its bytes outside every crossing secret,
	// with the mask where a secret begins.
	for i := range parts {
		lo, hi := starts[i], starts[i+1]
		var b []byte
		at := lo
		changed := false
		for _, f := range crossing {
			if f.End <= lo || f.Start >= hi {
				continue
			}
			changed = true
			if f.Start > at {
				b = append(b, joined[at:f.Start]...)
			}
			if f.Start >= lo {
				var fp [4]byte
				copy(fp[:], f.Fingerprint)
				b = appendMask(b, f.Kind, fp)
			}
			at = min(f.End, hi)
		}
		if !changed {
			continue
		}
		out[i] = append(b, joined[at:hi]...)
	}
	return out, rep, nil
}
