package explore

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// items is what a query runs over: a JSON array's members, an NDJSON
// file's records, or the nodes a path selects (isNodes: rows name them by
// their normalized path, not their index).
type items struct {
	d       *doc
	recs    bool
	kids    []child
	nodes   []span
	isNodes bool
}

// nodeItems are the nodes of a node list as items.
func (d *doc) nodeItems(nodes []span) items { return items{d: d, nodes: nodes, isNodes: true} }

func (d *doc) itemsOf(n node) items {
	if n.records {
		return items{d: d, recs: true}
	}
	return items{d: d, kids: d.members(n)}
}

func (it items) len() int {
	if it.isNodes {
		return len(it.nodes)
	}
	if it.recs {
		return len(it.d.records)
	}
	return len(it.kids)
}

// at returns item i; ok is false for an NDJSON record that is not JSON.
func (it items) at(i int) (span, bool) {
	if it.isNodes {
		return it.nodes[i], true
	}
	if it.recs {
		if len(it.d.badRecs) > 0 && it.d.badRecord(i) {
			return span{}, false
		}
		return it.d.records[i], true
	}
	return it.kids[i].val, true
}

// queryChunk is how many items a worker takes at a time.
const queryChunk = 2048

// forChunks runs work over [0, n) in chunks on up to GOMAXPROCS workers,
// each with its own evaluator. A panic in a worker is re-raised in the
// caller (where Call recovers it) rather than killing the process.
func (d *doc) forChunks(ctx context.Context, n int, work func(e *evaluator, chunk, lo, hi int)) error {
	nch := (n + queryChunk - 1) / queryChunk
	workers := min(runtime.GOMAXPROCS(0), nch, 8)
	if workers <= 1 {
		e := newEvaluator(d)
		e.ctx = ctx
		for c := 0; c < nch; c++ {
			if c&15 == 15 && ctx.Err() != nil {
				return ctx.Err()
			}
			work(e, c, c*queryChunk, min(n, (c+1)*queryChunk))
		}
		return ctx.Err()
	}
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		panicV any
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					panicV = r
					mu.Unlock()
				}
			}()
			e := newEvaluator(d)
			e.ctx = ctx
			for {
				c := int(next.Add(1) - 1)
				if c >= nch || ctx.Err() != nil {
					return
				}
				work(e, c, c*queryChunk, min(n, (c+1)*queryChunk))
			}
		}()
	}
	wg.Wait()
	if panicV != nil {
		panic(panicV)
	}
	return ctx.Err()
}

// selectItems returns the indexes of the items f matches (all valid items
// when f is nil), in order.
func selectItems(ctx context.Context, it items, f *filter) ([]int, error) {
	n := it.len()
	parts := make([][]int, (n+queryChunk-1)/queryChunk)
	err := it.d.forChunks(ctx, n, func(e *evaluator, c, lo, hi int) {
		var out []int
		for i := lo; i < hi; i++ {
			s, ok := it.at(i)
			if ok && (f == nil || e.match(f, s)) {
				out = append(out, i)
			}
		}
		parts[c] = out
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// fieldValue returns the value of a field in an item: the node a singular
// field selects, or the first node of a non-singular one.
func (e *evaluator) fieldValue(q *fquery, item span) (span, bool) {
	if q.singular {
		return e.single(q, item)
	}
	var out span
	found := false
	e.nodes(q, item, func(s span) bool { out, found = s, true; return false })
	return out, found
}

// sortKey orders values as jq does: null (and missing) < false < true <
// numbers < strings < arrays < objects; arrays and objects by their raw
// text. text is a string's number when it is a decimal number.
type sortKey struct {
	rank   uint8
	num    float64
	str    []byte
	idx    int
	isText bool
	text   float64
}

func makeSortKey(data []byte, s span, ok bool, idx int) sortKey {
	if !ok {
		return sortKey{idx: idx}
	}
	v := rawVal(data[s.start:s.end])
	switch v.k {
	case vBool:
		if v.b {
			return sortKey{rank: 2, idx: idx}
		}
		return sortKey{rank: 1, idx: idx}
	case vNum:
		return sortKey{rank: 3, num: v.num, idx: idx}
	case vStr:
		k := sortKey{rank: 4, str: v.str, idx: idx}
		k.text, k.isText = rawTextNumber(v.raw)
		return k
	case vArr:
		return sortKey{rank: 5, str: v.raw, idx: idx}
	case vObj:
		return sortKey{rank: 6, str: v.raw, idx: idx}
	}
	return sortKey{idx: idx}
}

func cmpSortKey(a, b sortKey) int {
	if a.rank != b.rank {
		return int(a.rank) - int(b.rank)
	}
	if a.rank == 3 {
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	}
	return bytes.Compare(a.str, b.str)
}

// mixedSorted is how sort_by orders a mixed field.
const mixedSorted = "sorted as written (text by code point, after JSON numbers)"

// sortItems orders idx by the field's value; ties keep item order in both
// directions. A field whose every non-null value is a decimal number
// written as a string sorts as those numbers; the note says so.
func sortItems(ctx context.Context, it items, idx []int, q *fquery, desc bool) ([]int, []numNote, error) {
	keys := make([]sortKey, len(idx))
	var (
		mu    sync.Mutex
		tally numTally
	)
	err := it.d.forChunks(ctx, len(idx), func(e *evaluator, _, lo, hi int) {
		var t numTally
		for j := lo; j < hi; j++ {
			s, _ := it.at(idx[j])
			v, ok := e.fieldValue(q, s)
			keys[j] = makeSortKey(it.d.data, v, ok, idx[j])
			switch k := &keys[j]; {
			case k.isText:
				t.text++
			case k.rank > 0:
				t.other++
			}
		}
		mu.Lock()
		tally.text += t.text
		tally.other += t.other
		mu.Unlock()
	})
	if err != nil {
		return nil, nil, err
	}
	var notes []numNote
	switch st := tally.state(); st {
	case numText:
		for j := range keys {
			if k := &keys[j]; k.isText {
				k.rank, k.num = 3, k.text
			}
		}
		fallthrough
	case numMixed:
		notes = []numNote{{field: fieldName(q), state: st, how: mixedSorted}}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		c := cmpSortKey(a, b)
		if desc {
			c = -c
		}
		if c == 0 {
			return a.idx - b.idx
		}
		return c
	})
	out := make([]int, len(keys))
	for i, k := range keys {
		out[i] = k.idx
	}
	return out, notes, nil
}
