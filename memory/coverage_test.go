package memory_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// answerFormats are the answers package memory can give, as the format
// strings of its source: every refusal (refuse's message, a path's
// reason given to bad, edit's "does not exist" wording, tool.Error's
// text) and every answer that starts with a capital letter (fmt.Sprintf
// of "File created…", "Here're…", "Successfully…"). Keyed by format, the
// value is where it is.
func answerFormats(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	add := func(e ast.Expr) {
		if s, ok := lit(e); ok && s != "" {
			out[s] = fset.Position(e.Pos()).String()
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			switch {
			case name == "bad" && len(call.Args) > 0: // a path's reason
				add(call.Args[0])
			case name == "edit" && len(call.Args) > 2: // a missing file's wording
				add(call.Args[2])
			case name == "Sprintf" && len(call.Args) > 0:
				if s, ok := lit(call.Args[0]); ok && s != "" && s[0] >= 'A' && s[0] <= 'Z' {
					add(call.Args[0])
				}
			case name == "refuse" && len(call.Args) > 1, name == "Error" && len(call.Args) > 0:
				a := call.Args[len(call.Args)-1]
				if be, ok := a.(*ast.BinaryExpr); ok {
					a = be.X
				}
				add(a)
			}
			return true
		})
	}
	return out
}

// formatRE matches what fmt.Sprintf(format, …) can give.
func formatRE(format string) *regexp.Regexp {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	var b strings.Builder
	b.WriteString("(?s)")
	last := 0
	for _, loc := range verb.FindAllStringIndex(format, -1) {
		b.WriteString(regexp.QuoteMeta(format[last:loc[0]]))
		if format[loc[0]:loc[1]] == "%%" {
			b.WriteString("%")
		} else {
			b.WriteString(".*?")
		}
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(format[last:]))
	return regexp.MustCompile(b.String())
}

// Every answer and refusal of the tool is in a golden script
// (testdata/*.txtar), which package memory runs on its reference store
// and package pad on both of its backends (TestMemoryScripts, files and
// Redis): a new refusal, or an answer reworded, without its script fails
// here. The few that no script can reach are named, with where they are
// tested instead.
func TestScriptsCoverEveryAnswer(t *testing.T) {
	elsewhere := map[string]string{
		"Error: The path %s runs through a symbolic link, which the memory tool does not follow.": "a link cannot be seeded in a script: pad's TestMemoryLinksRefused",
		"File %s exceeds maximum line limit of 999,999 lines.":                                    "a million lines do not fit in a golden script; not tested",
		"Error: no memory directory for this session: ":                                           "a session whose agent cannot be made; not tested",
		"it is not valid UTF-8": "JSON arguments carry no invalid UTF-8 (decoded as U+FFFD): TestClean",
	}
	var answers strings.Builder
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("scripts: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The want sections: what follows a "-- want --" or "-- want
		// error --" line up to the next section.
		for _, part := range strings.Split(string(b), "\n-- ")[1:] {
			head, body, _ := strings.Cut(part, "\n")
			if strings.HasPrefix(head, "want") {
				answers.WriteString(body)
				answers.WriteString("\n\x00\n")
			}
		}
	}
	formats := answerFormats(t)
	if len(formats) < 40 {
		t.Fatalf("found %d answer formats in the source, fewer than there are: the parse lost some", len(formats))
	}
	for format, at := range formats {
		if why, ok := elsewhere[format]; ok {
			t.Logf("not in a script: %q (%s)", format, why)
			continue
		}
		if !formatRE(format).MatchString(answers.String()) {
			t.Errorf("%s: %q is in no golden script's answers", at, format)
		}
	}
	for format := range elsewhere {
		if _, ok := formats[format]; !ok {
			t.Errorf("%q is no longer an answer: take it out of the list", format)
		}
	}
}
