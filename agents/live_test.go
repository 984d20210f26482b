package agents

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/retention"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// testLease is [cluster] lease in these tests: the least the config
// accepts, so that an expiry is seen within seconds.
const testLease = 2 * time.Second

// replica is a registry on its own memory_dir sharing url's Redis, as a
// replica on another host; its store is closed when t ends.
func replica(t *testing.T, url string, tweak ...func(*config.Config)) (*Registry, *state.Redis) {
	t.Helper()
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Cluster = config.Cluster{RedisURL: url, Prefix: "live-test", Lease: testLease}
	for _, f := range tweak {
		f(cfg)
	}
	st, err := state.NewRedis(state.RedisOptions{URL: url, Prefix: "live-test", MemoryDir: cfg.MemoryDir, Lease: testLease, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Options{Config: cfg, State: st})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.FinishAll(); _ = st.Close() })
	return r, st
}

// A run live on replica A is kept by replica B's sweep, though no agent
// of it is live on B; once A's lease is gone (released when its last agent
// ends, or expired when A dies without releasing), B's sweep removes it.
func TestSweepKeepsRunLiveOnAnotherReplica(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(a *Registry, st *state.Redis, sid string)
		// wait: how long the run stays live on B after end (the lease).
		wait time.Duration
	}{
		{"released", func(a *Registry, _ *state.Redis, sid string) { a.Finish(sid) }, 0},
		// A's connections closed: no renewal, no release, as after SIGKILL.
		{"expired", func(_ *Registry, st *state.Redis, _ string) { _ = st.Close() }, testLease},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := testredis.Start(t).URL()
			const owner = "alice"
			a, stA := replica(t, url)
			b, _ := replica(t, url)
			id := Identity{Agent: "w1", Role: RoleWorker, Run: "r1", Iteration: 1, Owner: owner}
			if _, err := a.Resolve(sessionCtx(t, a, "sa", id)); err != nil {
				t.Fatal(err)
			}
			// B served the run earlier: its copy of the run holds an old
			// stored output and an artifact, and no agent of it is live
			// on B.
			bw, err := b.Resolve(sessionCtx(t, b, "sb", id))
			if err != nil {
				t.Fatal(err)
			}
			stored, err := divert.Save(memdir.At(bw.ScratchpadDir), "k8s", "list", []byte(`{"items":[1]}`))
			if err != nil {
				t.Fatal(err)
			}
			tree := layout.For(b.opts.Config.MemoryDir, owner)
			art := filepath.Join(tree.Artifacts("r1"), "plan.md")
			if err := os.MkdirAll(filepath.Dir(art), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(art, []byte("# plan"), 0o600); err != nil {
				t.Fatal(err)
			}
			b.Finish("sb")
			old := time.Now().Add(-2 * time.Hour)
			for _, p := range []string{stored.Path, art} {
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
			run := tree.Run("r1")
			sweep := func() *retention.Report {
				t.Helper()
				rep, err := retention.Sweep(context.Background(), b.opts.Config.MemoryDir, retention.Options{
					Policy: retention.Policy{RunsMaxAge: time.Hour}, Guard: b})
				if err != nil || len(rep.Errors) > 0 {
					t.Fatalf("sweep: %v %v", err, rep.Errors)
				}
				return rep
			}
			if !b.LiveRun(run) || !b.Protected(art) {
				t.Fatal("B does not see the run live on A")
			}
			if rep := sweep(); len(rep.Plan.Actions) != 0 {
				t.Fatalf("B's sweep removes a run live on A: %+v", rep.Plan.Actions)
			}
			// A renews its lease while the run lives there.
			time.Sleep(testLease + testLease/4)
			if !b.LiveRun(run) {
				t.Fatal("A's lease expired while its agent lives: not renewed")
			}
			tc.end(a, stA, "sa")
			start := time.Now()
			if tc.wait > 0 {
				// Within the lease the run still counts as live.
				if rep := sweep(); len(rep.Plan.Actions) != 0 && time.Since(start) < tc.wait/2 {
					t.Fatalf("B's sweep removes the run before A's lease expired: %+v", rep.Plan.Actions)
				}
				time.Sleep(tc.wait + 200*time.Millisecond)
			}
			if b.LiveRun(run) {
				t.Fatalf("the run is live after A's lease is gone (%s)", tc.name)
			}
			sweep()
			if _, err := os.Stat(run); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("B kept the run after A's lease was gone: %v", err)
			}
		})
	}
}

// Without a replicated store, nothing is asked of Redis: a run is live
// only by this registry's agents (the guard of one process, unchanged).
func TestLiveRunAloneIsLocal(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	r := newRegistry(t, cfg)
	if r.live != nil {
		t.Fatal("a registry alone renews leases")
	}
	run := layout.For(cfg.MemoryDir, "").Run("r1")
	if r.LiveRun(run) {
		t.Fatal("live before any agent")
	}
	if _, err := r.Resolve(sessionCtx(t, r, "s", Identity{Agent: "w", Run: "r1"})); err != nil {
		t.Fatal(err)
	}
	if !r.LiveRun(run) {
		t.Fatal("not live with its agent")
	}
	r.Finish("s")
	if r.LiveRun(run) {
		t.Fatal("live after its agent finished")
	}
}

// The run a folder names, as retention asks by folder.
func TestRunOf(t *testing.T) {
	cfg := config.Default()
	cfg.MemoryDir = "/m"
	r := &Registry{opts: Options{Config: cfg}}
	for _, tc := range []struct {
		dir, owner, run string
		ok              bool
	}{
		{"/m/r1", "", "r1", true},
		{"/m/owners/alice/r1", "alice", "r1", true},
		{"/m/owners/alice", "", "", false},
		{"/m/scratchpad", "", "", false},
		{"/m", "", "", false},
		{"/elsewhere/r1", "", "", false},
		{"/m/r1/iteration-1", "", "", false},
	} {
		owner, run, ok := r.runOf(tc.dir)
		if owner != tc.owner || run != tc.run || ok != tc.ok {
			t.Errorf("runOf(%s) = %q %q %v, want %q %q %v", tc.dir, owner, run, ok, tc.owner, tc.run, tc.ok)
		}
	}
}
