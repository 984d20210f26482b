package divert

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// An agent's stored outputs stay in memory_dir: a link planted at its
// folder or a parent leading outside fails the save (the model reads why)
// and nothing is written there; a link at the output's name (predictable:
// server, tool and hash) is replaced, not written through. Files are 0600
// in folders 0700.
func TestSaveConfinedToMemoryDir(t *testing.T) {
	data := []byte(`{"items":[1,2,3]}`)
	for _, link := range []string{"scratchpad", "r1", "r1/iteration-2", "r1/iteration-2/scratchpad"} {
		t.Run(link, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := t.TempDir()
			at := filepath.Join(mem, filepath.FromSlash(link))
			os.MkdirAll(filepath.Dir(at), 0o700)
			if err := os.Symlink(outside, at); err != nil {
				t.Skipf("symbolic links: %v", err)
			}
			dir := filepath.Join(mem, "scratchpad")
			if link != "scratchpad" {
				dir = filepath.Join(mem, "r1", "iteration-2", "scratchpad")
			}
			d, err := memdir.In(mem, dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Save(d, "s", "t", data); !errors.Is(err, memdir.ErrOutside) {
				t.Errorf("Save through a link at %s: %v", link, err)
			}
			res := []byte(`{"content":[{"type":"text","text":"` + strings.Repeat("word ", 50) + `"}]}`)
			out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 10, Result: res}, &Agent{Enabled: true, Dir: dir, Top: mem, Counter: tokens.ForModel("openai", "gpt-4o")}, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil || out.Diverted || !strings.Contains(string(out.Result), "outside memory_dir") || strings.Contains(string(out.Result), outside) {
				t.Errorf("Decide through a link at %s: %v %s", link, err, out.Result)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("written outside memory_dir: %v", entries)
			}
		})
	}

	mem := t.TempDir()
	d, _ := memdir.In(mem, filepath.Join(mem, "scratchpad"))
	st, err := Save(d, "s", "t", data)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{d.Path(): 0o700, st.Path: 0o600} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	// The same output's name, planted as a link to a file outside of the
	// same size: not taken for the stored output, replaced.
	victim := filepath.Join(t.TempDir(), "victim")
	same, _ := os.ReadFile(st.Path)
	os.WriteFile(victim, []byte(strings.Repeat("x", len(same))), 0o600)
	os.Remove(st.Path)
	if err := os.Symlink(victim, st.Path); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	again, err := Save(d, "s", "t", data)
	if err != nil || again.Reused {
		t.Fatalf("Save over a link at its name: %+v %v", again, err)
	}
	if fi, err := os.Lstat(st.Path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the output's name after the save: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != strings.Repeat("x", len(same)) {
		t.Errorf("written through the link: %q", b)
	}
}
