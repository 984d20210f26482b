package main

import (
	"os"
	"strings"
	"testing"
)

// README's tables are whole (no blank line splitting one, no row twice)
// and no sentence of its prose is there twice: what a reader trips on
// first.
func TestREADMEHasNoLeftovers(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	inCode := false
	seen := map[string]int{}
	rows := map[string]int{}
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
			continue
		}
		if inCode {
			continue
		}
		if strings.HasPrefix(l, "|") {
			if i >= 2 && lines[i-1] == "" && strings.HasPrefix(lines[i-2], "|") {
				t.Errorf("README:%d: a blank line splits a table", i+1)
			}
			// A table of tools, keys or commands names each once.
			if cell := strings.SplitN(l, "|", 3)[1]; strings.HasPrefix(strings.TrimSpace(cell), "`") {
				if prev, ok := rows[cell]; ok && i-prev < 12 {
					t.Errorf("README:%d: row %q again (first at %d)", i+1, strings.TrimSpace(cell), prev+1)
				}
				rows[cell] = i
			}
			continue
		}
		if len(l) >= 60 {
			if prev, ok := seen[l]; ok {
				t.Errorf("README:%d: the line of %d is there again: %.80s", i+1, prev+1, l)
			}
			seen[l] = i
		}
	}
}
