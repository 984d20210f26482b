//go:build unix

package explore

import (
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"
)

// A FIFO in the read root is refused at once, by every tool and by grep
// over all files, and pins no thread: opening one would wait for a writer
// that never comes.
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.log"), "one\ntwo\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.log"), 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	env := dirEnv(t, dir)
	threads := pprof.Lookup("threadcreate").Count()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 300 {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"head", map[string]any{"file": "pipe.log"}},
				{"read", map[string]any{"file": "pipe.log"}},
				{"schema", map[string]any{"file": "pipe.log"}},
			} {
				if got := errCode(run(t, env, c.tool, c.args)); got != "not_a_regular_file" {
					t.Errorf("%s of a FIFO: %q", c.tool, got)
					return
				}
			}
		}
		if got := run(t, env, "grep", map[string]any{"pattern": "two"}); errCode(got) != "" {
			t.Errorf("grep over every file, a FIFO among them: %s", got)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a call on a FIFO blocked")
	}
	if grew := pprof.Lookup("threadcreate").Count() - threads; grew > 20 {
		t.Errorf("900 calls on a FIFO created %d threads", grew)
	}
}
