package toolsearch

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// synthetic returns n tools made from the test catalogue: copy k of a
// tool is on server "<server>-<k>" under prefix "<prefix><k>__", and its
// description gains a word of its copy, so the vocabulary, the postings
// and the prefixes all grow as a real 1,000-tool setup's would (several
// GitHub Enterprise hosts, clusters, workspaces).
func synthetic(tb testing.TB, n int) []Tool {
	tb.Helper()
	base, _ := loadCatalogue(tb)
	flavours := []string{"staging", "production", "europe", "legacy", "internal", "sandbox", "archive", "partner", "mobile", "billing"}
	out := make([]Tool, 0, n)
	for k := 0; len(out) < n; k++ {
		for _, t := range base {
			if len(out) == n {
				break
			}
			if k > 0 {
				prefix, name, _ := strings.Cut(t.Name, "__")
				fl := flavours[k%len(flavours)]
				t.Name = fmt.Sprintf("%s%d__%s", prefix, k, name)
				t.Server = fmt.Sprintf("%s-%s-%d", t.Server, fl, k)
				t.Description = t.Description + " On the " + fl + fmt.Sprintf(" instance #%d.", k)
			}
			out = append(out, t)
		}
	}
	return out
}

func BenchmarkNewIndex1000(b *testing.B) {
	tools := synthetic(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		NewIndex(tools)
	}
}

// BenchmarkSearch1000 runs every query of the set in turn over 1,000
// tools: ns/op is one search, ranking and top-k, without formatting.
func BenchmarkSearch1000(b *testing.B) {
	ix := NewIndex(synthetic(b, 1000))
	qs := loadQueries(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Search(qs[i%len(qs)].Query, DefaultLimit)
		i++
	}
}

// BenchmarkSearchFormat1000 is a whole search answer: Search and Format.
func BenchmarkSearchFormat1000(b *testing.B) {
	ix := NewIndex(synthetic(b, 1000))
	qs := loadQueries(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ix.Format(ix.Search(qs[i%len(qs)].Query, DefaultLimit))
		i++
	}
}

func BenchmarkClosest1000(b *testing.B) {
	ix := NewIndex(synthetic(b, 1000))
	b.ReportAllocs()
	for b.Loop() {
		ix.Closest("github__list_isues", 3)
	}
}

func BenchmarkSignature(b *testing.B) {
	tools, _ := loadCatalogue(b)
	var schema json.RawMessage
	for _, t := range tools {
		if len(t.InputSchema) > len(schema) {
			schema = t.InputSchema
		}
	}
	b.SetBytes(int64(len(schema)))
	b.ReportAllocs()
	for b.Loop() {
		Signature(schema)
	}
}
