//go:build unix

package retention

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// TestMain lets the test binary be the sweeping process that
// TestKilledSweep kills.
func TestMain(m *testing.M) {
	if dir := os.Getenv("RETENTION_SWEEP_DIR"); dir != "" {
		_, err := Sweep(context.Background(), dir, Options{Policy: killPolicy, Now: func() time.Time { return now }})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var killPolicy = Policy{MaxAge: 7 * 24 * time.Hour, RunsMaxAge: 30 * 24 * time.Hour}

const (
	killRuns    = 40
	killPerRun  = 400
	killOutputs = 8000
)

// content is what every file of the fixture holds: its own name, padded,
// so a reader can tell a whole file from a part.
func content(rel string) string { return strings.Repeat(filepath.ToSlash(rel)+"\n", 20) }

// TestKilledSweep SIGKILLs a real sweeping process part-way and checks
// that every remaining file is whole, every run is whole under its name
// (or in the trash), and the next sweep finishes the job.
func TestKilledSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 24,000 files")
	}
	m := t.TempDir()
	old := now.Add(-60 * 24 * time.Hour)
	write := func(rel string) {
		p := filepath.Join(m, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content(rel)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	for r := range killRuns {
		for i := range killPerRun {
			switch i % 3 {
			case 0:
				write(fmt.Sprintf("run%02d/artifacts/a%04d.md", r, i))
			case 1:
				write(fmt.Sprintf("run%02d/iteration-0/scratchpad/o%04d.json", r, i))
			default:
				write(fmt.Sprintf("run%02d/pad/.history/%04d.md", r, i))
			}
		}
	}
	for i := range killOutputs {
		write(fmt.Sprintf("scratchpad/out-%05d.json", i))
	}
	total := killRuns*killPerRun + killOutputs

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "RETENTION_SWEEP_DIR="+m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has removed something but not everything.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && countFiles(t, m) >= total-500 {
		time.Sleep(200 * time.Microsecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the sweep was not killed: %v", err)
	}
	left := countFiles(t, m)
	if left == 0 || left >= total {
		t.Fatalf("killed sweep left %d of %d files: not part-way", left, total)
	}
	t.Logf("killed part-way: %d of %d files left", left, total)

	// Every remaining file is whole.
	trashRuns := 0
	err = filepath.WalkDir(m, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(m, p)
		if rel == layout.LockFile {
			return nil
		}
		if layout.IsTemp(d.Name()) {
			t.Errorf("temporary file %s", rel)
		}
		want := rel
		if strings.HasPrefix(rel, layout.TrashPrefix) {
			// .trash-run07-abcdef/… held run07/…
			first, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
			name := strings.TrimPrefix(first, layout.TrashPrefix)
			want = name[:strings.LastIndex(name, "-")] + "/" + rest
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
		} else if string(b) != content(want) {
			t.Errorf("%s is not whole (%d bytes)", rel, len(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A run under its own name is complete.
	ents, _ := os.ReadDir(m)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "run") {
			if n := countFiles(t, filepath.Join(m, e.Name())); n != killPerRun {
				t.Errorf("run %s is half there: %d of %d files", e.Name(), n, killPerRun)
			}
		}
		if strings.HasPrefix(e.Name(), layout.TrashPrefix) {
			trashRuns++
		}
	}
	t.Logf("%d run(s) in the trash", trashRuns)

	// The next sweep finishes: nothing but the lock of the killed one is
	// in its way (taken over once stale).
	lockPath := filepath.Join(m, layout.LockFile)
	stale := time.Now().Add(-time.Hour)
	_ = os.Chtimes(lockPath, stale, stale)
	rep, err := Sweep(context.Background(), m, Options{Policy: killPolicy, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if n := countFiles(t, m); n != 0 || len(rep.Errors) > 0 {
		t.Fatalf("after the next sweep: %d files left, errors %v", n, rep.Errors)
	}
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != layout.LockFile {
			n++
		}
		return nil
	})
	return n
}
