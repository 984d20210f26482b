package pad

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// FuzzMemoryPaths: whatever paths the model sends to create, view,
// rename and delete, on the file backend, nothing is written outside the
// pad's memories/ and its versions' folder (a folder beside memory_dir
// stays empty, the pad's own files are the pad's); a path the tool takes
// is the file memory.Clean names, read back as written; and the delete
// leaves memories/ empty.
func FuzzMemoryPaths(f *testing.F) {
	for _, s := range [][2]string{
		{"/memories/a.md", "/memories/b/c.md"}, {"/memories/../x", "/memories/y"}, {"/memories/%2e%2e/x", "/x"},
		{"/memories//a/./b/", "/memories/a/b/c"}, {"/memories/é/😀.md", "/memories/ü"}, {"/memories/a\\..\\b", "/memories/.h"},
		{"/memories", "/memories/a"}, {"memories/a", "/memories/a "}, {"/memories/a\x00b", "/memories/a\u202eb"},
	} {
		f.Add(s[0], s[1])
	}
	top := f.TempDir()
	mem := filepath.Join(top, "mem")
	outside := filepath.Join(top, "outside")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		f.Fatal(err)
	}
	padDir := filepath.Join(mem, "pad")
	p, err := Open(padDir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	st := p.Memory(MemoryOptions{History: 2, Deleted: 2})
	defs, err := memory.Tools(func(context.Context) (memory.Store, error) { return st, nil }, memory.Options{})
	if err != nil {
		f.Fatal(err)
	}
	call := func(args map[string]any) (string, bool) {
		raw, _ := json.Marshal(args)
		res := defs[0].Handler(context.Background(), raw)
		return res.Text, res.IsError
	}
	// The pad's own files, there before any memory call, and its lock.
	own := map[string]bool{}
	_ = filepath.WalkDir(padDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			own[path] = true
		}
		return nil
	})
	memDir := filepath.Join(padDir, layout.PadMemoriesDir)
	histDir := filepath.Join(padDir, filepath.FromSlash(layout.PadMemoriesHistoryDir))

	// What a string becomes as a JSON argument (invalid UTF-8 as U+FFFD):
	// what the tool is given.
	sent := func(s string) string {
		b, _ := json.Marshal(s)
		_ = json.Unmarshal(b, &s)
		return s
	}

	f.Fuzz(func(t *testing.T, path, newPath string) {
		const text = "fuzzed\n"
		path, newPath = sent(path), sent(newPath)
		answer, refused := call(map[string]any{"command": "create", "path": path, "file_text": text})
		rel, cleanErr := memory.Clean(path)
		switch {
		case answer == "":
			t.Fatalf("create %q: no answer", path)
		case !refused && (cleanErr != nil || rel == ""):
			t.Fatalf("create %q taken, though Clean refuses it (%q, %v): %s", path, rel, cleanErr, answer)
		case !refused:
			b, err := os.ReadFile(filepath.Join(memDir, filepath.FromSlash(rel)))
			if err != nil || string(b) != text {
				t.Fatalf("create %q: memories/%s holds %q, %v", path, rel, b, err)
			}
			if got, isErr := call(map[string]any{"command": "view", "path": path}); isErr || !strings.Contains(got, "     1\tfuzzed\n") {
				t.Fatalf("view %q after its create: %s", path, got)
			}
			if got, _ := call(map[string]any{"command": "rename", "old_path": path, "new_path": newPath}); got == "" {
				t.Fatalf("rename %q to %q: no answer", path, newPath)
			}
		}
		// Every file below memory_dir is the pad's own, a memory file or a
		// version; nothing is beside memory_dir.
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || own[p] || p == filepath.Join(padDir, lockName) {
				return err
			}
			if !strings.HasPrefix(p, memDir+string(filepath.Separator)) && !strings.HasPrefix(p, histDir+string(filepath.Separator)) {
				t.Errorf("create %q, rename to %q: %s written", path, newPath, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Clean up for the next input: remove every file the tool shows.
		for _, dir := range []string{path, newPath} {
			if r, err := memory.Clean(dir); err == nil && r != "" {
				call(map[string]any{"command": "delete", "path": memory.Display(strings.SplitN(r, "/", 2)[0])})
			}
		}
		if entries, err := os.ReadDir(memDir); err == nil && len(entries) > 0 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("create %q, rename to %q: memories/ holds %v after the deletes", path, newPath, names)
		}
	})
}
