package explore

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/tidwall/pretty"
)

// maxGroups caps the groups (and distinct values) tracked per call; items
// in further groups are still counted, in the "other" row.
var maxGroups = 100_000

// maxCombos caps the group keys one item contributes when group_by fields
// select several values each ([*]).
const maxCombos = 256

// aggSpec is one count_by request.
type aggSpec struct {
	filter   *filter
	groups   []*fquery
	distinct *fquery
}

type aggGroup struct {
	count    int
	dist     map[string]int // distinct values of the distinct field (with group_by)
	nums     []float64      // its numeric values
	textNums []float64      // its decimal numbers written as strings
	extra    int            // distinct values past the cap
}

// aggResult is what count_by found.
type aggResult struct {
	scanned, matched int
	groups           map[string]*aggGroup
	untracked        int // items (distinct-only: values) in groups past the cap
	missing          int // distinct-only: matched items without the field
	nums             []float64
	textNums         []float64 // decimal numbers written as strings
	nonNum           int       // other values but null (stats are over numbers only)
	dist             numTally  // with group_by: the distinct field's values
}

// aggregate counts the matching items of it by spec.
func aggregate(ctx context.Context, it items, spec aggSpec) (*aggResult, error) {
	var (
		mu    sync.Mutex
		parts []*aggResult
	)
	n := it.len()
	byWorker := map[*evaluator]*aggResult{}
	err := it.d.forChunks(ctx, n, func(e *evaluator, _, lo, hi int) {
		mu.Lock()
		r := byWorker[e]
		if r == nil {
			r = &aggResult{groups: map[string]*aggGroup{}}
			byWorker[e] = r
			parts = append(parts, r)
		}
		mu.Unlock()
		aggChunk(e, it, spec, r, lo, hi)
	})
	if err != nil {
		return nil, err
	}
	out := &aggResult{groups: map[string]*aggGroup{}}
	for _, p := range parts {
		out.merge(p)
	}
	return out, nil
}

func (r *aggResult) merge(p *aggResult) {
	r.scanned += p.scanned
	r.matched += p.matched
	r.untracked += p.untracked
	r.missing += p.missing
	r.nonNum += p.nonNum
	r.nums = append(r.nums, p.nums...)
	r.textNums = append(r.textNums, p.textNums...)
	r.dist.text += p.dist.text
	r.dist.other += p.dist.other
	for k, g := range p.groups {
		t := r.groups[k]
		if t == nil {
			if len(r.groups) >= maxGroups {
				r.untracked += g.count
				continue
			}
			r.groups[k] = g
			continue
		}
		t.count += g.count
		t.nums = append(t.nums, g.nums...)
		t.textNums = append(t.textNums, g.textNums...)
		t.extra += g.extra
		for v, c := range g.dist {
			if _, ok := t.dist[v]; ok || len(t.dist) < maxGroups {
				t.dist[v] += c
			} else {
				t.extra++
			}
		}
	}
}

// aggChunk aggregates items [lo, hi) into r. Keys are the normalized raw
// JSON of the values, fields separated by NUL (which JSON text cannot hold).
func aggChunk(e *evaluator, it items, spec aggSpec, r *aggResult, lo, hi int) {
	var (
		key   []byte
		fvals = make([][][]byte, len(spec.groups)) // per group field: its normalized values
		dvals [][]byte
		buf   []byte
	)
	data := it.d.data
	null := []byte("null")
	collect := func(q *fquery, item span, buf []byte, out [][]byte) ([]byte, [][]byte) {
		start := len(buf)
		if q.singular {
			if s, ok := e.single(q, item); ok {
				buf = appendNorm(buf, data[s.start:s.end])
				out = append(out, buf[start:len(buf):len(buf)])
			}
			return buf, out
		}
		e.nodes(q, item, func(s span) bool {
			st := len(buf)
			buf = appendNorm(buf, data[s.start:s.end])
			out = append(out, buf[st:len(buf):len(buf)])
			return len(out) < maxCombos
		})
		return buf, out
	}
	for i := lo; i < hi; i++ {
		s, ok := it.at(i)
		if !ok {
			continue
		}
		r.scanned++
		if spec.filter != nil && !e.match(spec.filter, s) {
			continue
		}
		r.matched++
		buf = buf[:0]
		dvals = dvals[:0]
		if spec.distinct != nil {
			buf, dvals = collect(spec.distinct, s, buf, dvals)
		}
		if len(spec.groups) == 0 {
			// distinct only: each value is a group.
			if len(dvals) == 0 {
				r.missing++
			}
			for _, v := range dvals {
				r.addNum(v)
				r.add(v, 1, nil)
			}
			continue
		}
		for j, q := range spec.groups {
			buf, fvals[j] = collect(q, s, buf, fvals[j][:0])
			if len(fvals[j]) == 0 {
				fvals[j] = append(fvals[j], null)
			}
		}
		if len(fvals) == 1 && len(fvals[0]) == 1 {
			if spec.distinct == nil {
				r.addNum(fvals[0][0])
			}
			r.add(fvals[0][0], 1, dvals)
			continue
		}
		combos(fvals, &key, func(k []byte) { r.add(k, 1, dvals) })
	}
}

// combos calls fn with every combination of the fields' values, joined by
// NUL, at most maxCombos.
func combos(fields [][][]byte, key *[]byte, fn func([]byte)) {
	n := 0
	var rec func(i int)
	rec = func(i int) {
		if i == len(fields) {
			n++
			fn(*key)
			return
		}
		mark := len(*key)
		for _, v := range fields[i] {
			if n >= maxCombos {
				break
			}
			*key = (*key)[:mark]
			if i > 0 {
				*key = append(*key, 0)
			}
			*key = append(*key, v...)
			rec(i + 1)
		}
		*key = (*key)[:mark]
	}
	*key = (*key)[:0]
	rec(0)
}

func (r *aggResult) add(k []byte, n int, dvals [][]byte) {
	g, ok := r.groups[string(k)]
	if !ok {
		if len(r.groups) >= maxGroups {
			r.untracked += n
			return
		}
		g = &aggGroup{}
		if dvals != nil {
			g.dist = map[string]int{}
		}
		r.groups[string(k)] = g
	}
	g.count += n
	for _, v := range dvals {
		if g.dist == nil {
			g.dist = map[string]int{}
		}
		if _, ok := g.dist[string(v)]; ok || len(g.dist) < maxGroups {
			g.dist[string(v)]++
		} else {
			g.extra++
		}
		r.dist.add(v)
		if v[0] == '-' || v[0] >= '0' && v[0] <= '9' {
			g.nums = append(g.nums, parseNum(v))
		} else if f, ok := rawTextNumber(v); ok {
			g.textNums = append(g.textNums, f)
		}
	}
}

func (r *aggResult) addNum(v []byte) {
	switch {
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		r.nums = append(r.nums, parseNum(v))
	case v[0] == '"':
		if f, ok := rawTextNumber(v); ok {
			r.textNums = append(r.textNums, f)
		} else {
			r.nonNum++
		}
	case string(v) != "null":
		r.nonNum++
	}
}

// statsState is whether the stats field's numbers arrived as text.
func (r *aggResult) statsState() numState {
	return numTally{text: len(r.textNums), other: len(r.nums) + r.nonNum}.state()
}

// appendNorm appends a canonical form of a raw JSON value: strings
// re-encoded only when they hold escapes, numbers with a fraction or
// exponent reformatted (1.50 and 1.5 group together), containers compacted.
func appendNorm(buf, raw []byte) []byte {
	switch raw[0] {
	case '"':
		if bytes.IndexByte(raw[1:len(raw)-1], '\\') < 0 {
			return append(buf, raw...)
		}
		s, _ := tool.MarshalNoEscape(jsonscan.Unquote(raw))
		return append(buf, s...)
	case '{', '[':
		return append(buf, pretty.Ugly(raw)...)
	case 't', 'f', 'n':
		return append(buf, raw...)
	}
	if !bytes.ContainsAny(raw, ".eE") && !bytes.HasPrefix(raw, []byte("-0")) {
		return append(buf, raw...)
	}
	return appendNum(buf, parseNum(raw))
}

// appendNum formats f as encoding/json does.
func appendNum(buf []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(buf, int64(f), 10)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.AppendFloat(buf, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, 64)
}

// numStats summarises numbers: min, max, sum, mean, p50, p95
// (nearest-rank percentiles).
type numStats struct {
	n                        int
	min, max, sum, mean, p50 float64
	p95                      float64
}

func statsOf(v []float64) *numStats {
	if len(v) == 0 {
		return nil
	}
	s := slices.Clone(v)
	slices.Sort(s)
	st := &numStats{n: len(s), min: s[0], max: s[len(s)-1]}
	for _, x := range s {
		st.sum += x
	}
	st.mean = st.sum / float64(len(s))
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	st.p50, st.p95 = rank(0.50), rank(0.95)
	return st
}

// fields renders the stats as JSON members.
func (st *numStats) fields() obj {
	r := func(f float64) json3 { return json3(f) }
	return obj{{"min", r(st.min)}, {"max", r(st.max)}, {"sum", r(st.sum)}, {"mean", r(st.mean)}, {"p50", r(st.p50)}, {"p95", r(st.p95)}}
}

// json3 is a number printed with at most 3 decimals.
type json3 float64

func (f json3) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	if math.Abs(v) < 1e15 {
		v = math.Round(v*1000) / 1000
	}
	return appendNum(nil, v), nil
}

// aggRow is one group, sorted for output.
type aggRow struct {
	key string
	g   *aggGroup
}

// sortedGroups orders groups by count (descending), then key.
func (r *aggResult) sortedGroups() []aggRow {
	rows := make([]aggRow, 0, len(r.groups))
	for k, g := range r.groups {
		rows = append(rows, aggRow{k, g})
	}
	slices.SortFunc(rows, func(a, b aggRow) int {
		if a.g.count != b.g.count {
			return b.g.count - a.g.count
		}
		// Ties: field by field, numbers in numeric order.
		ka, kb := strings.Split(a.key, "\x00"), strings.Split(b.key, "\x00")
		for i := 0; i < len(ka) && i < len(kb); i++ {
			if c := compareValues(ka[i], kb[i]); c != 0 {
				return c
			}
		}
		return len(ka) - len(kb)
	})
	return rows
}

// rawJSON is pre-encoded JSON inside an obj.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }
