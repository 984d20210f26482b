package toolsearch

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestExplain prints, for the query in $TOOLSEARCH_EXPLAIN, the query's
// terms and each top hit's score by term (what to look at when tuning
// fields, weights or synonyms):
//
//	TOOLSEARCH_EXPLAIN='open a jira ticket' go test ./toolsearch -run TestExplain -v
func TestExplain(t *testing.T) {
	q := os.Getenv("TOOLSEARCH_EXPLAIN")
	if q == "" {
		t.Skip("set TOOLSEARCH_EXPLAIN to a query")
	}
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	words, _ := terms(q, nil, nil)
	t.Logf("terms %v", words)
	for _, h := range ix.Search(q, 8) {
		var parts []string
		for _, w := range words {
			for _, x := range append([]string{w}, synonyms[w]...) {
				id, ok := ix.termID[x]
				if !ok {
					continue
				}
				for _, p := range ix.postings[id] {
					if int(p.tool) == h.Tool {
						mark := ""
						if x != w {
							mark = "~"
						}
						parts = append(parts, fmt.Sprintf("%s%s=%.2f", mark, x, p.weight))
					}
				}
			}
		}
		t.Logf("%-40s %6.3f  %s", h.Name, h.Score, strings.Join(parts, " "))
	}
}
