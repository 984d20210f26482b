package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// storedFileNames are the names below memory_dir that only this package
// may spell (the same list as the session hook's stored-name check).
var storedFileNames = []string{
	"iteration-", ArtifactsDir, OwnersDir, UsageFile,
	PadMarkdownFile, PadJSONFile, PadLedgerFile, PadLedgerLockFile, PadLockFile,
	PadKeysFile, PadKeysHistoryExt, PadSnapshotDir, PadHistoryDir, PadNoticeFile,
	PadMemoriesDir, PadMemoriesHistoryDir, PadMemoryPathFile, PadMemoryDeletedFile,
}

// TestStoredNamesOnlyInLayout reads every non-test Go file of the module
// outside this package and fails on a stored name built by hand:
//
//   - a literal that is one of the names of memory_dir's tree (as the
//     hook's check does);
//   - in a file that talks to Redis (imports go-redis), a key of a pad
//     joined by hand: a literal starting ":" and a name or "{"
//     (`base+":doc"`, `prefix+":{"+id`), ":" as an operand of + (`base +
//     ":" + k`), a literal starting with a part of [RedisPadParts] and ':'
//     ("keys:history", "broken:%d", "dedupe:w:"), or a part's name in a
//     []string literal (the hand-kept TTL list this replaced).
//
// Names in messages ("lock" in "pad …: lock: dial tcp") are not keys and
// pass.
func TestStoredNamesOnlyInLayout(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, p := range RedisPadParts {
		parts = append(parts, strings.TrimSuffix(p.Name, ":"))
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "node_modules", ".git", "layout":
				if rel != "." {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		redisFile := slices.ContainsFunc(f.Imports, func(s *ast.ImportSpec) bool {
			return strings.HasPrefix(s.Path.Value, `"github.com/redis/go-redis`)
		})
		for _, v := range storedLiterals(f, redisFile, parts) {
			t.Errorf("%s:%d: %s", rel, fset.Position(v.pos).Line, v.why)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked: is the module root %s?", checked, root)
	}
}

type violation struct {
	pos token.Pos
	why string
}

// storedLiterals returns the stored names f builds by hand (see
// [TestStoredNamesOnlyInLayout]); parts are the Redis parts' names
// without a family's trailing ':'.
func storedLiterals(f *ast.File, redisFile bool, parts []string) []violation {
	var out []violation
	str := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(lit.Value)
		return s, err == nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec, *ast.Field:
			return false // import paths and struct tags are not names
		case *ast.BinaryExpr:
			if redisFile && n.Op == token.ADD {
				for _, e := range []ast.Expr{n.X, n.Y} {
					if s, ok := str(e); ok && s == ":" {
						out = append(out, violation{e.Pos(), `":" joins a Redis key by hand: use layout.RedisKey`})
					}
				}
			}
		case *ast.CompositeLit:
			if arr, ok := n.Type.(*ast.ArrayType); redisFile && ok {
				if id, ok := arr.Elt.(*ast.Ident); ok && id.Name == "string" {
					for _, e := range n.Elts {
						if s, ok := str(e); ok && slices.Contains(parts, s) {
							out = append(out, violation{e.Pos(), strconv.Quote(s) + " in a list of a pad's keys: derive it from layout.RedisPadParts"})
						}
					}
				}
			}
		case *ast.BasicLit:
			s, ok := str(n)
			if !ok {
				return true
			}
			if slices.Contains(storedFileNames, s) {
				out = append(out, violation{n.Pos(), strconv.Quote(s) + " is a stored name: use layout's"})
			}
			if !redisFile {
				return true
			}
			if len(s) > 1 && s[0] == ':' && (s[1] == '{' || s[1] >= 'a' && s[1] <= 'z') {
				out = append(out, violation{n.Pos(), strconv.Quote(s) + " joins a Redis key by hand: use layout.RedisKey or layout.RedisBase"})
			}
			for _, p := range parts {
				if rest, ok := strings.CutPrefix(s, p+":"); ok && (rest == "" || rest[0] != ' ') {
					out = append(out, violation{n.Pos(), strconv.Quote(s) + " names a Redis part of a pad by hand: use layout's RedisPad…"})
					break
				}
			}
		}
		return true
	})
	return out
}

// The check itself: each form it must catch, and what must pass.
func TestStoredLiterals(t *testing.T) {
	var parts []string
	for _, p := range RedisPadParts {
		parts = append(parts, strings.TrimSuffix(p.Name, ":"))
	}
	for _, tt := range []struct {
		src   string
		redis bool
		bad   int
	}{
		{`var x = "pad.md"`, false, 1},
		{`var x = "pad.md" + "x"`, false, 1},
		{"type T struct{ A string `json:\"pad.md\"` }", false, 0},
		{`var x = base + ":" + k`, true, 1},
		{`var x = base + ":" + k`, false, 0},
		{`var x = prefix + ":{" + id + "}"`, true, 1},
		{`var x = base + ":doc"`, true, 1},
		{`var x = fmt.Sprintf("broken:%d", 1)`, true, 1},
		{`var x = "dedupe:w:" + k`, true, 1},
		{`var x = "keys:history"`, true, 1},
		{`var x = "dedupe:" + h`, true, 1},
		{`var x = []string{"doc", "history"}`, true, 2},
		{`var x = fail("lock", err)`, true, 0},
		{`var x = fmt.Sprintf("broken: %s", b)`, true, 0},
		{`var x = ": %w"`, true, 0},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package x\n"+tt.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := storedLiterals(f, tt.redis, parts); len(got) != tt.bad {
			t.Errorf("%s (redis %v): %d found, want %d: %v", tt.src, tt.redis, len(got), tt.bad, got)
		}
	}
}
