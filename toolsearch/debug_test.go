package toolsearch

import (
	"fmt"
	"os"
	"testing"
)

func TestDebugExplain(t *testing.T) {
	q := os.Getenv("Q")
	if q == "" {
		t.Skip()
	}
	tools, _ := loadCatalogue(t)
	ix := NewIndex(tools)
	words, _ := terms(q, nil, nil)
	fmt.Println("terms", words)
	for _, h := range ix.Search(q, 6) {
		fmt.Printf("%-40s %.3f:", h.Name, h.Score)
		for _, w := range words {
			for _, x := range append([]string{w}, synonyms[w]...) {
				id, ok := ix.termID[x]
				if !ok {
					continue
				}
				for _, p := range ix.postings[id] {
					if int(p.tool) == h.Tool {
						fmt.Printf(" %s=%.2f", x, p.weight)
					}
				}
			}
		}
		fmt.Println()
	}
}
