package budget

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// usage.jsonl stays in memory_dir: a link planted at it, or at the
// owner's tree, leading outside refuses the record (the subscribers still
// get it) and nothing is written there. A new usage.jsonl is 0600 in an
// owner's tree made 0700.
func TestUsageConfinedToMemoryDir(t *testing.T) {
	for _, tt := range []struct {
		owner, link string
		file        bool
	}{
		{"", layout.UsageFile, true},
		{"alice", "owners/alice/" + layout.UsageFile, true},
		{"alice", "owners/alice", false},
		{"alice", "owners", false},
	} {
		t.Run(tt.link, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := t.TempDir()
			target := outside
			if tt.file {
				target = filepath.Join(outside, "victim")
			}
			at := filepath.Join(mem, filepath.FromSlash(tt.link))
			os.MkdirAll(filepath.Dir(at), 0o700)
			if err := os.Symlink(target, at); err != nil {
				t.Skipf("symbolic links: %v", err)
			}
			e := NewEvents(mem)
			ch, stop := e.Subscribe()
			defer stop()
			if err := e.Finish(ownedAgent("w", tt.owner)); !errors.Is(err, memdir.ErrOutside) {
				t.Errorf("Finish through a link at %s: %v", tt.link, err)
			}
			if u := <-ch; u.AgentName != "w" {
				t.Errorf("the subscriber got %+v", u)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("written outside memory_dir: %v", entries)
			}
		})
	}
	if runtime.GOOS == "windows" {
		return
	}
	mem := t.TempDir()
	if err := NewEvents(mem).Finish(ownedAgent("w", "bob")); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		filepath.Join(mem, layout.OwnersDir): 0o700, layout.For(mem, "bob").Base: 0o700, layout.For(mem, "bob").Usage(): 0o600,
	} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want %v", p, fi.Mode().Perm(), err, want)
		}
	}
}
