package agents

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/retention"
)

var _ retention.Guard = (*Registry)(nil)

// The registry tells a sweep what live sessions need, and forgets it when
// they finish; a sweep planned before a file was pointed to again keeps
// it.
func TestRegistryGuard(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Pad.Scope = config.ScopeRun
	r := NewRegistry(Options{Config: cfg})
	ctx := WithSession(WithIdentity(context.Background(), Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2}), "s1")
	a, err := r.Resolve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mem := cfg.MemoryDir
	run := filepath.Join(mem, "r1")
	st, err := divert.Save(a.ScratchpadDir, "k8s", "list", []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(mem, "scratchpad", "x.json")
	if r.Protected(st.Path) {
		t.Fatal("protected before the session was pointed to it")
	}
	a.Divert().OnStore(st.Path)
	for p, want := range map[string]bool{
		st.Path:                                       true,
		filepath.Join(run, "artifacts", "a.md"):       true,
		filepath.Join(run, "pad", "pad.md"):           true,
		filepath.Join(run, "pad", ".history", "1.md"): true,
		other: false,
		filepath.Join(run, "iteration-2", "scratchpad", "old.json"): false,
		filepath.Join(mem, "r2", "artifacts", "a.md"):               false,
	} {
		if got := r.Protected(p); got != want {
			t.Errorf("Protected(%s) = %v, want %v", p, got, want)
		}
	}
	if !r.LiveRun(run) || r.LiveRun(filepath.Join(mem, "r2")) {
		t.Error("LiveRun")
	}

	// A sweep sees the live run and the pointed file, even past max_age.
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(st.Path, old, old)
	rep, err := retention.Sweep(context.Background(), mem, retention.Options{
		Policy: retention.Policy{MaxAge: time.Hour, RunsMaxAge: time.Hour}, Guard: r})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Plan.Actions) != 0 {
		t.Fatalf("a sweep would remove %+v", rep.Plan.Actions)
	}

	r.Finish("s1")
	if r.Protected(st.Path) || r.LiveRun(run) || r.Protected(filepath.Join(run, "artifacts", "a.md")) {
		t.Fatal("still protected after the session finished")
	}
	rep, err = retention.Sweep(context.Background(), mem, retention.Options{
		Policy: retention.Policy{MaxAge: time.Hour, RunsMaxAge: time.Hour}, Guard: r})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(run); !os.IsNotExist(err) || rep.Removed != 1 {
		t.Fatalf("finished run not removed: %v, %+v", err, rep)
	}
}

// divert.Save of an output already stored makes it young again.
func TestReuseTouches(t *testing.T) {
	dir := t.TempDir()
	st, err := divert.Save(dir, "s", "t", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(st.Path, old, old)
	st2, err := divert.Save(dir, "s", "t", []byte("hello"))
	if err != nil || !st2.Reused {
		t.Fatal(err, st2.Reused)
	}
	fi, _ := os.Stat(st.Path)
	if time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("mtime %v not refreshed", fi.ModTime())
	}
}
