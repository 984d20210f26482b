package agents

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
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
	r := newRegistry(t, cfg)
	ctx := sessionCtx(t, r, "s1", Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 2})
	a, err := r.Resolve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mem := cfg.MemoryDir
	run := filepath.Join(mem, "r1")
	st, err := divert.Save(memdir.At(a.ScratchpadDir), "k8s", "list", []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(mem, "scratchpad", "x.json")
	if r.Protected(st.Path) {
		t.Fatal("protected before the session was pointed to it")
	}
	a.Divert().Account.Stored(st.Path)
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
	st, err := divert.Save(memdir.At(dir), "s", "t", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(st.Path, old, old)
	st2, err := divert.Save(memdir.At(dir), "s", "t", []byte("hello"))
	if err != nil || !st2.Reused {
		t.Fatal(err, st2.Reused)
	}
	fi, _ := os.Stat(st.Path)
	if time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("mtime %v not refreshed", fi.ModTime())
	}
}

// With bearer tokens, a coordinator and a worker of alice's run r1 stay
// connected through a sweep that may remove runs older than an hour:
// everything of the live run stays (the worker's stored output, the
// coordinator's artifact, the run's pad), while alice's finished run and
// bob's run of the same name r1, which has no live agent, are swept. On
// files and on Redis (pads and artifacts on the server, the run's folder
// holding the outputs and the artifacts' local cache).
func TestRegistryGuardOwners(t *testing.T) {
	t.Run("file", func(t *testing.T) { guardOwners(t, config.BackendFile, "") })
	t.Run("redis", func(t *testing.T) { guardOwners(t, config.BackendRedis, testredis.Start(t).URL()) })
}

func guardOwners(t *testing.T, backend, redisURL string) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Pad.Scope = config.ScopeRun
	cfg.Pad.Backend = backend
	cfg.Pad.RedisURL = redisURL
	r := newRegistry(t, cfg)
	resolve := func(sid string, id Identity) *Agent {
		t.Helper()
		a, err := r.Resolve(sessionCtx(t, r, sid, id))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// What an agent leaves: an artifact (coordinators), a stored output it
	// was pointed to (workers), a note in the run's pad.
	work := func(a *Agent, note string) (output string) {
		t.Helper()
		if a.ID.Role == RoleCoordinator {
			env, err := a.Artifacts()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.Store.Write("plan.md", "# plan of "+note); err != nil {
				t.Fatal(err)
			}
			// On Redis the folder holds this host's copy of a large one.
			if err := env.Store.Local("coordinator-plan.md"); err != nil {
				t.Fatal(err)
			}
		} else {
			st, err := divert.Save(memdir.At(a.ScratchpadDir), "k8s", "list", []byte(`{"items":["`+note+`"]}`))
			if err != nil {
				t.Fatal(err)
			}
			a.Divert().Account.Stored(st.Path)
			output = st.Path
		}
		p, err := a.Pad()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append(note, nil); err != nil {
			t.Fatal(err)
		}
		return output
	}
	aliceCoord := resolve("a1", Identity{Agent: "coord", Role: RoleCoordinator, Run: "r1", Owner: "alice"})
	aliceWorker := resolve("a2", Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1, Owner: "alice"})
	work(aliceCoord, "alice-live")
	out := work(aliceWorker, "alice-live")
	for _, id := range []Identity{
		{Agent: "coord", Role: RoleCoordinator, Run: "done", Owner: "alice"},
		{Agent: "w1", Role: RoleWorker, Run: "done", Owner: "alice"},
		{Agent: "coord", Role: RoleCoordinator, Run: "r1", Owner: "bob"},
		{Agent: "w1", Role: RoleWorker, Run: "r1", Owner: "bob"},
	} {
		sid := id.Owner + "-" + id.Run + "-" + id.Agent
		work(resolve(sid, id), id.Owner+"-"+id.Run)
		r.Finish(sid)
	}
	// Everything is two hours old.
	old := time.Now().Add(-2 * time.Hour)
	err := filepath.WalkDir(cfg.MemoryDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	policy := retention.Policy{MaxAge: time.Hour, RunsMaxAge: time.Hour}
	rep, err := retention.Sweep(context.Background(), cfg.MemoryDir, retention.Options{Policy: policy, Guard: r})
	if err != nil || len(rep.Errors) > 0 {
		t.Fatalf("sweep: %v %v", err, rep.Errors)
	}
	alice, bob := layout.For(cfg.MemoryDir, "alice"), layout.For(cfg.MemoryDir, "bob")
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the live worker's stored output was swept: %v", err)
	}
	for _, gone := range []string{alice.Run("done"), bob.Run("r1")} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("finished run %s kept: %v", gone, err)
		}
	}
	// The live run as its agents see it.
	env, err := aliceWorker.Artifacts()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := env.Store.Read("plan.md", 0); err != nil || !res.Found || !strings.Contains(res.Content, "alice-live") {
		t.Errorf("the live run's artifact: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(alice.Artifacts("r1"), "coordinator-plan.md")); err != nil {
		t.Errorf("the live run's artifact file was swept: %v", err)
	}
	p, err := aliceWorker.Pad()
	if err != nil {
		t.Fatal(err)
	}
	if text, err := p.Read(nil); err != nil || !strings.Contains(text, "alice-live") {
		t.Errorf("the live run's pad: %v\n%s", err, text)
	}
	if !r.LiveRun(alice.Run("r1")) || r.LiveRun(filepath.Join(cfg.MemoryDir, "r1")) || r.LiveRun(bob.Run("r1")) {
		t.Error("LiveRun names another owner's run")
	}

	// Once its agents are gone, the run is swept too.
	r.Finish("a1")
	r.Finish("a2")
	if _, err := retention.Sweep(context.Background(), cfg.MemoryDir, retention.Options{Policy: policy, Guard: r}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(alice.Run("r1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("finished run r1 kept: %v", err)
	}
}
