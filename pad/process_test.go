package pad

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// The tests below re-run this test binary as a child process: the child
// runs TestHelperProcess, which acts on PAD_HELPER and exits.
const helperEnv = "PAD_HELPER"

func helperCommand(t *testing.T, role, dir string, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "PAD_DIR="+dir)
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("helper process for the multi-process tests")
	}
	dir := os.Getenv("PAD_DIR")
	p, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	switch role {
	case "append":
		workers, _ := strconv.Atoi(os.Getenv("PAD_WORKERS"))
		each, _ := strconv.Atoi(os.Getenv("PAD_EACH"))
		proc := os.Getenv("PAD_PROC")
		if err := appendMany(p, proc, workers, each); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "crash":
		// Die for real in the crash window: after the temp file is written
		// and synced, before the rename.
		beforeRename = func(string) error { os.Exit(3); return nil }
		_, err := p.Update([]Patch{{Section: "Task", Op: OpReplace, Content: "new version that must not land"}})
		fmt.Fprintln(os.Stderr, "update returned instead of crashing:", err)
		os.Exit(1)
	}
	os.Exit(2)
}

func appendMany(p *Pad, proc string, workers, each int) error {
	return runWorkers(workers, each, func(w, i int) error {
		// A long note makes a torn write visible as a broken line.
		note := fmt.Sprintf("%s/%d/%d %s", proc, w, i, strings.Repeat("z", 300))
		_, err := p.Append(note, []string{proc})
		return err
	})
}

// runWorkers calls fn(w, i) for i < each in each of workers goroutines w;
// a worker stops at its first error, which is returned.
func runWorkers(workers, each int, fn func(w, i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := fn(w, i); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func TestConcurrentAppendsAcrossProcesses(t *testing.T) {
	const procs, workers = 2, 8
	each := 500
	if testing.Short() {
		each = 50
	}
	dir := filepath.Join(t.TempDir(), "pad")
	var cmds []*exec.Cmd
	for i := 0; i < procs; i++ {
		cmd := helperCommand(t, "append", dir, "PAD_PROC=p"+strconv.Itoa(i), "PAD_WORKERS="+strconv.Itoa(workers), "PAD_EACH="+strconv.Itoa(each))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, ledgerFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want := procs * workers * each
	if len(lines) != want {
		t.Fatalf("ledger has %d lines, want %d", len(lines), want)
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var e Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %d torn: %v: %.80q", i+1, err, l)
		}
		key := strings.Fields(e.Note)[0]
		if seen[key] {
			t.Fatalf("duplicate entry %s", key)
		}
		seen[key] = true
	}
	p, _ := Open(dir, Options{})
	v, err := p.View(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Entries) != want || len(v.Warnings) != 0 {
		t.Fatalf("view: %d entries, warnings %q", len(v.Entries), v.Warnings)
	}
}

func TestCrashBeforeRenameKeepsOldFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pad")
	p, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, p, Patch{Section: "Task", Op: OpReplace, Content: "old version"})
	before := readFile(t, p.Path())

	cmd := helperCommand(t, "crash", dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("child did not crash in the window: %v\n%s", err, out)
	}
	if got := readFile(t, p.Path()); got != before {
		t.Fatalf("old file changed by the crash:\n%s", got)
	}
	temps, _ := filepath.Glob(filepath.Join(dir, layout.TempPattern("*")))
	if len(temps) != 1 {
		t.Fatalf("expected the crash to leave its temp file, found %v", temps)
	}
	if strings.Contains(readFile(t, temps[0]), "must not land") == false {
		t.Fatal("temp file does not hold the interrupted write")
	}

	// Next start: the temp file is gone and the pad works.
	p2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if temps, _ := filepath.Glob(filepath.Join(dir, layout.TempPattern("*"))); len(temps) != 0 {
		t.Fatalf("temp files survived restart: %v", temps)
	}
	out2, err := p2.Read(nil)
	if err != nil || !strings.Contains(out2, "old version") || strings.Contains(out2, "Note:") {
		t.Fatalf("read after crash: %v\n%s", err, out2)
	}
}

func TestConcurrentUpdatesInProcessLoseNothing(t *testing.T) {
	p := newPad(t, Options{Sections: []Section{{Name: "Log", Cap: 0}}})
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := p.Update([]Patch{{Section: "Log", Op: OpAppend, Content: "item " + strconv.Itoa(i)}}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	got := readFile(t, p.Path())
	if c := strings.Count(got, "\n- item "); c != n {
		t.Fatalf("%d of %d read-modify-writes survived:\n%s", c, n, got)
	}
}

func openAppend(p *Pad) (*os.File, error) {
	return os.OpenFile(filepath.Join(p.Dir(), ledgerFile), os.O_WRONLY|os.O_APPEND, 0o644)
}

func TestCompactionDuringAppendsLosesNothing(t *testing.T) {
	// Entries are stamped "now"; the TTL is long, so compaction drops only
	// the unreadable line planted below, yet it rewrites the file while
	// appends run.
	p := newPad(t, Options{EntryTTL: 24 * time.Hour})
	if _, err := p.Append("seed", nil); err != nil {
		t.Fatal(err)
	}
	f, _ := openAppend(p)
	f.WriteString("garbage\n")
	f.Close()
	const workers, each = 4, 100
	appended := make(chan error, 1)
	go func() {
		appended <- runWorkers(workers, each, func(w, i int) error {
			_, err := p.Append(fmt.Sprintf("w%d-%d", w, i), nil)
			return err
		})
	}()
	dropped := 0
	for i := 0; i < 20; i++ {
		n, err := compactLedger(memdir.At(p.Dir()), time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		dropped += n
	}
	if err := <-appended; err != nil {
		t.Fatal(err)
	}
	entries, bad, _ := readLedger(memdir.At(p.Dir()))
	if len(entries) != 1+workers*each || bad != 0 || dropped != 1 {
		t.Fatalf("%d entries, %d bad, %d dropped; want %d, 0, 1", len(entries), bad, dropped, 1+workers*each)
	}
}
