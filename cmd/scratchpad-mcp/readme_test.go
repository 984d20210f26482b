package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are README.md and every Markdown file under docs/, relative to
// this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join("..", "..", "README.md")}
	err := filepath.WalkDir(filepath.Join("..", "..", "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// README's and the docs' tables are whole (no blank line splitting one,
// no row twice) and no sentence of a page's prose is there twice: what a
// reader trips on first.
func TestREADMEHasNoLeftovers(t *testing.T) {
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(f), "../../")
		lines := strings.Split(string(b), "\n")
		inCode := false
		seen := map[string]int{}
		rows := map[string]int{}
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
				continue
			}
			if inCode {
				continue
			}
			if strings.HasPrefix(l, "|") {
				if i >= 2 && lines[i-1] == "" && strings.HasPrefix(lines[i-2], "|") {
					t.Errorf("%s:%d: a blank line splits a table", name, i+1)
				}
				// A table of tools, keys or commands names each once.
				if cell := strings.SplitN(l, "|", 3)[1]; strings.HasPrefix(strings.TrimSpace(cell), "`") {
					if prev, ok := rows[cell]; ok && i-prev < 12 {
						t.Errorf("%s:%d: row %q again (first at %d)", name, i+1, strings.TrimSpace(cell), prev+1)
					}
					rows[cell] = i
				}
				continue
			}
			if len(l) >= 60 {
				if prev, ok := seen[l]; ok {
					t.Errorf("%s:%d: the line of %d is there again: %.80s", name, i+1, prev+1, l)
				}
				seen[l] = i
			}
		}
	}
}

// README stays a desktop user's page (issue 58): at most 4,000 words,
// install and mounting before anything else; the rest is in docs/.
func TestREADMEIsShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n > 4000 {
		t.Errorf("README.md has %d words, want at most 4,000: move a section to docs/", n)
	}
	var heads []string
	for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(b), -1) {
		heads = append(heads, m[1])
	}
	if len(heads) < 3 || heads[0] != "Install" || heads[1] != "Put it in front of your servers" || heads[2] != "Mount it in your client" {
		t.Errorf("README's sections are %q: install, then init, then mounting come first", heads)
	}
}

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinksResolve: every relative link of README.md and docs/ names
// a file or folder of the repository, and every #anchor a heading of the
// page it points at (GitHub's anchors: the heading lower-cased, spaces as
// -, other punctuation dropped).
func TestDocsLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		b, _ := os.ReadFile(path)
		inCode := false
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
			}
			if !inCode && strings.HasPrefix(l, "#") {
				a[slug(strings.TrimLeft(l, "#"))] = true
			}
		}
		anchors[path] = a
		return a
	}
	n := 0
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(f), "../../")
		inCode := false
		for i, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
				continue
			}
			if inCode {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				file, anchor, _ := strings.Cut(target, "#")
				path := f
				if file != "" {
					path = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: %s: no such file", name, i+1, target)
						continue
					}
				}
				if anchor != "" && !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: %s: no heading with that anchor", name, i+1, target)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", n)
	}
}

// slug is GitHub's anchor of a heading.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}
