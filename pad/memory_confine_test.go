package pad

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// A symbolic link planted below memories/ (or memories/ itself) is
// neither followed nor replaced, by reads and writes alike, whether it
// leads out of memory_dir or to another file of the pad; the listing
// leaves it out; nothing is written where it points.
func TestMemoryLinksRefused(t *testing.T) {
	top := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	padDir := filepath.Join(top, "pad")
	d, err := memdir.In(top, padDir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := OpenIn(d, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Memory(MemoryOptions{})
	memCall(t, st, false, `{"command":"create","path":"/memories/ok.md","file_text":"ok"}`)
	mem := filepath.Join(padDir, layout.PadMemoriesDir)
	for name, target := range map[string]string{
		"out":     outside,                           // a folder outside memory_dir
		"out.md":  filepath.Join(outside, "secret"),  // a file outside
		"pad.md":  filepath.Join(padDir, "pad.md"),   // the pad's own document
		"self.md": filepath.Join(mem, "ok.md"),       // another memory file
		"hist":    filepath.Join(padDir, ".history"), // the pad's history
	} {
		if err := os.Symlink(target, filepath.Join(mem, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range []string{
		`{"command":"view","path":"/memories/out/secret"}`,
		`{"command":"view","path":"/memories/out.md"}`,
		`{"command":"view","path":"/memories/self.md"}`,
		`{"command":"create","path":"/memories/out/new.md","file_text":"x"}`,
		`{"command":"create","path":"/memories/hist/x","file_text":"x"}`,
		`{"command":"create","path":"/memories/out.md","file_text":"x","expected_revision":0}`,
		`{"command":"str_replace","path":"/memories/out.md","old_str":"secret","new_str":"x"}`,
		`{"command":"insert","path":"/memories/pad.md","insert_line":0,"insert_text":"x"}`,
		`{"command":"delete","path":"/memories/out.md"}`,
		`{"command":"delete","path":"/memories/out/secret"}`,
		`{"command":"rename","old_path":"/memories/out.md","new_path":"/memories/in.md"}`,
		`{"command":"rename","old_path":"/memories/ok.md","new_path":"/memories/out/ok.md"}`,
		`{"command":"rename","old_path":"/memories/ok.md","new_path":"/memories/out.md"}`,
	} {
		got := memCall(t, st, true, args)
		if !strings.Contains(got, "symbolic link") && !strings.Contains(got, "does not exist") && !strings.Contains(got, "already exists") {
			t.Errorf("%s: %s", args, got)
		}
	}
	if got := memCall(t, st, false, `{"command":"view","path":"/memories"}`); strings.Contains(got, "out") || strings.Contains(got, "self") || !strings.Contains(got, "ok.md") {
		t.Errorf("listing shows links:\n%s", got)
	}
	for _, name := range []string{"out", "out.md", "pad.md", "self.md", "hist"} {
		if fi, err := os.Lstat(filepath.Join(mem, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the link planted: %v %v", name, fi, err)
		}
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 || readFile(t, filepath.Join(outside, "secret")) != "secret\n" {
		t.Errorf("outside changed: %v", entries)
	}
	// memories/ itself a link out of memory_dir.
	if err := os.RemoveAll(mem); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, mem); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"command":"view","path":"/memories"}`,
		`{"command":"view","path":"/memories/secret"}`,
		`{"command":"create","path":"/memories/new.md","file_text":"x"}`,
	} {
		if got := memCall(t, st, true, args); !strings.Contains(got, "symbolic link") {
			t.Errorf("%s through a linked memories/: %s", args, got)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("written outside: %v", entries)
	}
}

// On disk, a folder lives only while it holds a file: deleting or
// renaming the last file of a folder removes the folders left empty. A
// crash's temporary files below memories/ are removed when the pad is
// opened.
func TestMemoryFolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pad")
	p, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := p.Memory(MemoryOptions{})
	mem := filepath.Join(dir, layout.PadMemoriesDir)
	memCall(t, st, false, `{"command":"create","path":"/memories/a/b/c.md","file_text":"c"}`)
	memCall(t, st, false, `{"command":"create","path":"/memories/a/d.md","file_text":"d"}`)
	memCall(t, st, false, `{"command":"rename","old_path":"/memories/a/b/c.md","new_path":"/memories/x/c.md"}`)
	if _, err := os.Stat(filepath.Join(mem, "a", "b")); !os.IsNotExist(err) {
		t.Errorf("a/b left behind: %v", err)
	}
	memCall(t, st, false, `{"command":"delete","path":"/memories/a/d.md"}`)
	if _, err := os.Stat(filepath.Join(mem, "a")); !os.IsNotExist(err) {
		t.Errorf("a left behind: %v", err)
	}
	if readFile(t, filepath.Join(mem, "x", "c.md")) != "c" {
		t.Error("x/c.md")
	}
	if fi, err := os.Stat(filepath.Join(mem, "x")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("x: %v %v, want a 0700 folder", fi, err)
	}
	tmp := filepath.Join(mem, "x", layout.TempName("c.md", "crash"))
	htmp := filepath.Join(dir, filepath.FromSlash(layout.PadMemoriesHistoryDir), layout.PadMemoryHistoryName("x/c.md"), layout.TempName("00000000000000000002", "crash"))
	for _, f := range []string{tmp, htmp} {
		if err := os.WriteFile(f, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{tmp, htmp} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left: %v", f, err)
		}
	}
}
