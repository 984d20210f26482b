package retention

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A sweep never removes or moves anything outside memory_dir through a
// symbolic link planted in it: one there before the scan (owners/ leading
// out), or one swapped in between the scan and the removals (a stored
// outputs' folder, an owner's tree holding a finished run, a run being
// emptied from the trash). The files outside are whole afterwards.
func TestSweepConfinedToMemoryDir(t *testing.T) {
	policy := Policy{MaxAge: time.Hour, RunsMaxAge: time.Hour}
	tests := []struct {
		name string
		// setup fills mem (and outside, the tree the link will lead to)
		// and returns the link to plant and when: before the scan, or
		// after it (the folder it replaces is removed first).
		setup func(t *testing.T, mem, outside string) (link string, afterScan bool)
	}{
		{"owners before the scan", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, outside, "bob/scratchpad/s-t-1.json", 10, 48*time.Hour)
			put(t, outside, "bob/r1/pad/pad.md", 10, 48*time.Hour)
			put(t, mem, "scratchpad/s-t-2.json", 10, 48*time.Hour)
			return "owners", false
		}},
		{"stored outputs swapped", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, mem, "scratchpad/s-t-1.json", 10, 48*time.Hour)
			put(t, outside, "s-t-1.json", 10, 48*time.Hour) // same name, size and time
			return "scratchpad", true
		}},
		{"owner's tree swapped", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, mem, "owners/bob/r1/pad/pad.md", 10, 48*time.Hour)
			put(t, outside, "r1/pad/pad.md", 10, 48*time.Hour)
			return "owners/bob", true
		}},
		{"run swapped", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, mem, "r1/artifacts/plan.md", 10, 48*time.Hour)
			put(t, outside, "artifacts/plan.md", 10, 48*time.Hour)
			return "r1", true
		}},
		{"trash swapped", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, mem, ".trash-r1-abc/artifacts/plan.md", 10, 48*time.Hour)
			put(t, outside, "artifacts/plan.md", 10, 48*time.Hour)
			return ".trash-r1-abc", true
		}},
		{"iteration swapped", func(t *testing.T, mem, outside string) (string, bool) {
			put(t, mem, "owners/bob/r1/iteration-1/scratchpad/s-t-1.json", 10, 48*time.Hour)
			put(t, mem, "owners/bob/r1/pad/pad.md", 10, time.Minute) // the run is live enough
			put(t, outside, "scratchpad/s-t-1.json", 10, 48*time.Hour)
			return "owners/bob/r1/iteration-1", true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := filepath.Join(t.TempDir(), "mem")
			outside := t.TempDir()
			link, afterScan := tt.setup(t, mem, outside)
			at := filepath.Join(mem, filepath.FromSlash(link))
			plant := func() {
				t.Helper()
				if err := os.RemoveAll(at); err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Dir(at), 0o700)
				if err := os.Symlink(outside, at); err != nil {
					t.Skipf("symbolic links: %v", err)
				}
			}
			before := snapshotOutside(t, outside)
			if !afterScan {
				plant()
			}
			inv, err := Scan(context.Background(), mem)
			if err != nil {
				t.Fatal(err)
			}
			plan := Plan(inv, policy, nil, now)
			if afterScan {
				plant()
			}
			rep := Execute(context.Background(), mem, plan, policy, nil)
			if got := snapshotOutside(t, outside); got != before {
				t.Errorf("outside memory_dir changed by the sweep (%d removed, errors %v):\n%s\nwas\n%s", rep.Removed, rep.Errors, got, before)
			}
		})
	}
}

// snapshotOutside lists every file under dir with its size and time.
func snapshotOutside(t *testing.T, dir string) string {
	t.Helper()
	var out string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out += rel + " " + fi.ModTime().String() + "\n"
		}
		return nil
	})
	return out
}
