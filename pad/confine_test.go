package pad

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// snapshotTree is every name under dir with its content (folders as "/").
func snapshotTree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out = append(out, rel+"/")
		} else {
			data, _ := os.ReadFile(p)
			out = append(out, rel+"="+string(data))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// A pad in memory_dir, used once (so its folders and files exist), then a
// symbolic link leading out of memory_dir put in place of one of them: no
// operation writes, creates or removes anything outside, the ones that
// reach the link fail with memdir.ErrOutside, and the tools answer
// "outside_memory_dir".
func TestPadConfinedToMemoryDir(t *testing.T) {
	ops := []struct {
		name string
		op   func(p *Pad) error
	}{
		{"update", func(p *Pad) error {
			_, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "changed"}})
			return err
		}},
		{"append", func(p *Pad) error { _, err := p.Append("another finding", nil); return err }},
		{"set key", func(p *Pad) error {
			_, err := p.UpdateKeys("", []KeyOp{{Op: "set", Key: "k2", Value: json.RawMessage(`2`)}})
			return err
		}},
		{"snapshot", func(p *Pad) error { _, err := p.Snapshot("", "s2"); return err }},
		{"compact", func(p *Pad) error { _, err := p.Compact(); return err }},
		{"read", func(p *Pad) error { _, err := p.Read(nil); return err }},
		{"history", func(p *Pad) error { _, err := p.History(); return err }},
	}
	// Each link, and the operations that must reach it (and so fail).
	links := []struct {
		name     string
		file     bool // a file's name (the link points to a file outside)
		mustFail []string
	}{
		{"", false, []string{"update", "append", "set key", "snapshot", "read", "history"}},
		{historyDir, false, []string{"update", "set key", "history"}},
		{snapshotDir, false, []string{"snapshot"}},
		{ledgerFile, true, []string{"append", "read"}},
		{ledgerLockFile, true, []string{"append"}},
		{lockName, true, []string{"update", "set key", "snapshot"}},
		{mdFile, true, []string{"read"}},
		{keysFile, true, []string{"read"}},
	}
	for _, l := range links {
		for _, op := range ops {
			t.Run(strings.TrimPrefix(l.name+"/", "/")+op.name, func(t *testing.T) {
				mem := filepath.Join(t.TempDir(), "mem")
				outside := t.TempDir()
				os.WriteFile(filepath.Join(outside, "victim"), []byte("not memory_dir's\n"), 0o600)
				d, err := memdir.In(mem, filepath.Join(mem, "owners", "alice", "pad"))
				if err != nil {
					t.Fatal(err)
				}
				p, err := OpenIn(d, Options{EntryTTL: time.Hour, Now: func() time.Time { return time.Now().Add(2 * time.Hour) }})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "first"}}); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Append("a finding", nil); err != nil {
					t.Fatal(err)
				}
				if _, err := p.UpdateKeys("", []KeyOp{{Op: "set", Key: "k", Value: json.RawMessage(`1`)}}); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Snapshot("", "s1"); err != nil {
					t.Fatal(err)
				}
				// Now the link, in place of what was there.
				at := d.Join(l.name)
				if err := os.RemoveAll(at); err != nil {
					t.Fatal(err)
				}
				target := outside
				if l.file {
					target = filepath.Join(outside, "victim")
				}
				if err := os.Symlink(target, at); err != nil {
					t.Skipf("symbolic links: %v", err)
				}
				before := snapshotTree(t, outside)
				err = op.op(p)
				if err != nil && !errors.Is(err, memdir.ErrOutside) {
					t.Errorf("%s: %v, want an error wrapping memdir.ErrOutside", op.name, err)
				}
				if err == nil && contains(l.mustFail, op.name) {
					t.Errorf("%s through a link at %q succeeded", op.name, l.name)
				}
				if err != nil && strings.Contains(err.Error(), outside) {
					t.Errorf("the error names the link's target: %v", err)
				}
				if after := snapshotTree(t, outside); after != before {
					t.Errorf("outside memory_dir changed:\n%s\nwas\n%s", after, before)
				}
			})
		}
	}
	// What the model reads.
	mem := filepath.Join(t.TempDir(), "mem")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(mem, "pad")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	d, _ := memdir.In(mem, filepath.Join(mem, "pad"))
	h := newHarness(t, func(context.Context) (*Pad, error) { return OpenIn(d, Options{}) }, Options{})
	text, isErr := h.tool(context.Background(), ToolAppend, map[string]any{"note": "n"})
	if !isErr || !strings.Contains(text, `"error":"outside_memory_dir"`) {
		t.Errorf("append_scratchpad through a planted pad/: %s", text)
	}
	p := &Pad{store: &fileStore{d: d, file: mdFile, ext: ".md"}, opts: Options{}}
	p.opts, _ = p.opts.normalize()
	h = newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	text, _ = h.tool(context.Background(), ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "x"}}})
	var obj map[string]any
	if json.Unmarshal([]byte(text), &obj) != nil || obj["error"] != "outside_memory_dir" {
		t.Errorf("update_scratchpad through a planted pad/: %s", text)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A pad's folders are 0700 and its files 0600, the lock and the ledger
// included; a pad folder an older version made 0755, with a 0644 lock and
// ledger, is tightened by the next write.
func TestPadModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	mem := t.TempDir()
	old := filepath.Join(mem, "agents", "x", "pad")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(mem, "agents"), filepath.Join(mem, "agents", "x"), old} {
		os.Chmod(p, 0o755)
	}
	for _, f := range []string{lockName, ledgerLockFile, ledgerFile} {
		os.WriteFile(filepath.Join(old, f), nil, 0o644)
		os.Chmod(filepath.Join(old, f), 0o644)
	}
	for _, dir := range []string{filepath.Join(mem, "pad"), old} {
		d, err := memdir.In(mem, dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := OpenIn(d, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "t"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append("n", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Snapshot("", "s"); err != nil {
			t.Fatal(err)
		}
	}
	filepath.WalkDir(mem, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == mem {
			return err
		}
		fi, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			rel, _ := filepath.Rel(mem, p)
			t.Errorf("%s: %v, want %v", rel, fi.Mode().Perm(), want)
		}
		return nil
	})
}
