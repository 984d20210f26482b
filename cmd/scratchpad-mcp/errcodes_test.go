package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeLiteral finds the error codes a tool family answers in its source:
// errorResult("code", …), code = "code", toolError{"code", …}, Error: "code"
// and const codeX = "code". A literal with anything but [a-z_] (a message)
// is not a code and does not match.
var codeLiteral = regexp.MustCompile(`(?:errorResult\(|code = |Code: |toolError\{(?:Error: )?|Error: +|const code[A-Za-z]* += |"error":)"([a-z_]+)"`)

// TestErrorCodesOneList keeps every error code the tool families answer in
// one list (the "## Error codes" section of docs/tools.md), so one meaning has one
// code: the pad once answered bad_arguments and internal where the
// exploration tools answer invalid_arguments and internal_error.
func TestErrorCodesOneList(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Error codes\n")
	if start < 0 {
		t.Fatal("docs/tools.md has no ## Error codes section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_<>]+)`").FindAllStringSubmatch(section, -1) {
		listed[m[1]] = true
	}
	for _, tc := range []struct {
		family  string
		atLeast int // so a regexp that stopped matching fails the test
	}{
		{"explore", 15},
		{"pad", 12},
		{"artifacts", 5},
		{"reference", 4},
	} {
		files, err := filepath.Glob(filepath.Join("..", "..", tc.family, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range codeLiteral.FindAllStringSubmatch(string(src), -1) {
				found[m[1]] = true
			}
		}
		if len(found) < tc.atLeast {
			t.Errorf("%s: found %d codes, want at least %d: %v", tc.family, len(found), tc.atLeast, found)
		}
		for code := range found {
			ok := listed[code] || strings.HasSuffix(code, "_too_large") && listed["<tool>_too_large"]
			if !ok {
				t.Errorf("%s answers %q, which the error code list of docs/tools.md does not hold", tc.family, code)
			}
		}
	}
	// The synonyms the list replaced must not come back into it.
	for _, old := range []string{"bad_arguments", "internal"} {
		if listed[old] {
			t.Errorf("docs/tools.md lists %q, a second code for a meaning that has one", old)
		}
	}
}
