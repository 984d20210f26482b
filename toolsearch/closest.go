package toolsearch

import (
	"sort"
	"strings"
)

// closeEnough is the similarity (0 to 1: the mean of edit similarity and
// word overlap) a name needs for Closest to suggest it.
const closeEnough = 0.45

// Closest suggests up to n exposed names for name, a tool name that is not
// in the index (misspelt, half remembered, or from another prefix), best
// first. A name is close by edit distance (Damerau-Levenshtein, ignoring
// case, against the exposed name and against the part after its
// "prefix__") or by the words it shares with name, synonyms counting
// ("create_ticket" is close to "jira__jira_create_issue"). When no name is
// close, Closest answers the best [Index.Search] hits for name's words;
// it answers nothing only when those match nothing either.
func (ix *Index) Closest(name string, n int) []string {
	if n <= 0 {
		return nil
	}
	name = head(name)
	q := strings.ToLower(strings.TrimSpace(name))
	q = q[:min(len(q), maxEditLen*2)] // names are short; a long one is compared on its start
	qBare := bare(q)
	qStems := stemmedWords(q)
	qWords := expandWords(qStems)
	type cand struct {
		i   int
		sim float64
	}
	var cs []cand
	for i := range ix.tools {
		ov := overlap(qWords, len(qStems), ix.words[i])
		// The edit similarity it takes to be close with this overlap.
		need := 2*closeEnough - ov
		full := ix.lowerNames[i]
		sim := editSimilarity(q, full, need)
		if b := bare(full); b != full || qBare != q {
			sim = max(sim, editSimilarity(qBare, b, need))
		}
		if sim = (sim + ov) / 2; sim >= closeEnough {
			cs = append(cs, cand{i, sim})
		}
	}
	sort.Slice(cs, func(a, b int) bool {
		if cs[a].sim != cs[b].sim {
			return cs[a].sim > cs[b].sim
		}
		return cs[a].i < cs[b].i
	})
	var out []string
	for _, c := range cs[:min(n, len(cs))] {
		out = append(out, ix.tools[c.i].Name)
	}
	if len(out) == 0 {
		for _, h := range ix.Search(strings.Join(splitWords(name, nil), " "), n) {
			out = append(out, h.Name)
		}
	}
	return out
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

// bare is a name without its "prefix__".
func bare(name string) string {
	if i := strings.Index(name, "__"); i >= 0 && i+2 < len(name) {
		return name[i+2:]
	}
	return name
}

// expandWords adds to words their synonyms, as a set.
func expandWords(words []string) map[string]bool {
	set := make(map[string]bool, len(words)*4)
	for _, w := range words {
		set[w] = true
		for _, s := range synonyms[w] {
			set[s] = true
		}
	}
	return set
}

// overlap is the share of a tool's name words that the query's words (with
// synonyms) hold, over the longer of the two names (nq is the number of
// query words before synonyms), so "list" alone is not close to every
// list_ tool and "list_open_issues_for_me" not to "list_issues".
func overlap(q map[string]bool, nq int, tool []string) float64 {
	if len(tool) == 0 || len(q) == 0 {
		return 0
	}
	hit := 0
	for _, w := range tool {
		if q[w] {
			hit++
		}
	}
	return float64(hit) / float64(max(len(tool), nq))
}

// editSimilarity is 1 - distance/longer length: 1 for equal strings, 0
// for nothing in common. A similarity below need is answered as 0 as soon
// as it is certain (most names are far from a misspelt one, and the
// distance then stops after a few rows).
func editSimilarity(a, b string, need float64) float64 {
	if a == b {
		return 1
	}
	la, lb := min(len(a), maxEditLen), min(len(b), maxEditLen)
	if la == 0 || lb == 0 {
		return 0
	}
	longer := float64(max(la, lb))
	limit := int((1 - need) * longer) // the most edits that still reach need
	if limit < 0 || max(la, lb)-min(la, lb) > limit {
		return 0
	}
	d := editDistance(a, b, limit)
	if d > limit {
		return 0
	}
	return 1 - float64(d)/longer
}

// maxEditLen: names are compared on their first 128 bytes.
const maxEditLen = 128

// editDistance is the optimal-string-alignment Damerau-Levenshtein
// distance of a and b in bytes (tool names are ASCII in practice; other
// bytes still compare correctly, only a multi-byte typo costs more than 1),
// or some number above limit once the distance is sure to pass it. Names
// longer than maxEditLen bytes are compared on their first maxEditLen.
func editDistance(a, b string, limit int) int {
	const maxLen = maxEditLen
	a, b = a[:min(len(a), maxLen)], b[:min(len(b), maxLen)]
	var rows [3][maxLen + 1]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		// A row's minimum never falls in later rows, but a transposition
		// reads two rows back: stop only when both rows are past limit.
		if rowMin > limit && i > 1 && minOf(prev[:len(b)+1]) > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
