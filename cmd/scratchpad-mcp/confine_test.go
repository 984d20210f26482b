package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run delete and pad delete remove what is in memory_dir only: with a
// link planted on the way (owners/ leading out), the command fails and
// the tree outside is whole; a link inside the folder is removed, not
// followed.
func TestDeleteConfinedToMemoryDir(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	outside := t.TempDir()
	for _, f := range []string{"alice/r1/artifacts/coordinator-plan.md", "alice/agents/w1/pad/pad.md", "kept.txt"} {
		p := filepath.Join(outside, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("not memory_dir's"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(mem, 0o700)
	if err := os.Symlink(outside, filepath.Join(mem, "owners")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	for _, args := range [][]string{
		{"run", "delete", "r1", "--config", cfg, "--owner", "alice", "--yes"},
		{"pad", "delete", "--config", cfg, "--agent", "w1", "--owner", "alice", "--yes"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code == 0 || !strings.Contains(errOut, "outside memory_dir") {
			t.Errorf("%s through a planted link: %d %s%s", strings.Join(args[:2], " "), code, out, errOut)
		}
	}
	for _, f := range []string{"alice/r1/artifacts/coordinator-plan.md", "alice/agents/w1/pad/pad.md"} {
		if _, err := os.Stat(filepath.Join(outside, filepath.FromSlash(f))); err != nil {
			t.Errorf("removed outside memory_dir: %s (%v)", f, err)
		}
	}
	// A link inside the run's folder goes with the folder; its target stays.
	os.Remove(filepath.Join(mem, "owners"))
	run := filepath.Join(mem, "r2")
	os.MkdirAll(run, 0o700)
	if err := os.Symlink(outside, filepath.Join(run, "artifacts")); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "run", "delete", "r2", "--config", cfg, "--yes"); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("run delete: %d %s%s", code, out, errOut)
	}
	if _, err := os.Lstat(run); !os.IsNotExist(err) {
		t.Errorf("the run is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "kept.txt")); err != nil {
		t.Errorf("deleted through a link inside the run: %v", err)
	}
}
