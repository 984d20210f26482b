package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// With bearer tokens a coordinator and a worker of alice's run r1 stay
// connected over HTTP through serve's retention sweep: the worker's stored
// output, the coordinator's artifact and the run's pad are all still
// there afterwards, as the agents see them. Alice's finished run and bob's
// run of the same name, whose agents have gone, are swept. On files and on
// Redis. (The sweep is serve's own, sweepOnce with the registry as guard,
// run in-process instead of waiting out the minimum interval of 1m.)
func TestSweepKeepsLiveRunOfOwner(t *testing.T) {
	t.Run("file", func(t *testing.T) { sweepKeepsLiveRun(t, "\n[pad]\nscope = \"run\"\n") })
	t.Run("redis", func(t *testing.T) {
		srv := testredis.Start(t)
		sweepKeepsLiveRun(t, "\n[pad]\nscope = \"run\"\nbackend = \"redis\"\nredis_url = \""+srv.URL()+"\"\n")
	})
}

func sweepKeepsLiveRun(t *testing.T, padCfg string) {
	cfgPath, mem, tok := tenancyConfig(t, padCfg+"\n[retention]\nmax_age = \"30s\"\nruns_max_age = \"30s\"\n", "alice", "bob")
	addr, a := serveInProcess(t, cfgPath)
	cfg, log := a.cfg, a.log
	ctx := context.Background()
	base := "http://" + addr

	run := func(run, role, agent, iteration string) map[string]string {
		return map[string]string{"X-Scratchpad-Run": run, "X-Scratchpad-Role": role, "X-Scratchpad-Agent": agent, "X-Scratchpad-Iteration": iteration}
	}
	coord := ownerClient(t, base, tok["alice"], run("r1", "coordinator", "coord", "0"))
	worker := ownerClient(t, base, tok["alice"], run("r1", "worker", "w1", "1"))
	waitForTool(t, worker, "listing")
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"write_artifact", map[string]any{"filename": "plan.md", "content": "# plan\nalice-live"}},
		{"append_scratchpad", map[string]any{"note": "alice-live-note"}},
	} {
		if out := callTool(t, coord, step.tool, step.args); strings.Contains(out, `"error"`) {
			t.Fatalf("%s: %s", step.tool, short(out))
		}
	}
	m := storedName.FindStringSubmatch(callTool(t, worker, "listing", map[string]any{"n": 300}))
	if m == nil {
		t.Fatal("the worker's listing was not diverted")
	}
	output := m[1]

	// Two finished runs beside it: alice's "done", bob's "r1".
	for _, f := range []struct{ owner, run string }{{"alice", "done"}, {"bob", "r1"}} {
		c := ownerClient(t, base, tok[f.owner], run(f.run, "coordinator", "coord", "0"))
		if out := callTool(t, c, "write_artifact", map[string]any{"filename": "plan.md", "content": f.owner + "-" + f.run}); strings.Contains(out, `"error"`) {
			t.Fatalf("%s: %s", f.owner, short(out))
		}
		callTool(t, c, "append_scratchpad", map[string]any{"note": f.owner + "-" + f.run})
		// A stored output: on Redis, what the run has on this host's disk.
		if !storedName.MatchString(callTool(t, c, "listing", map[string]any{"n": 300})) {
			t.Fatal("the listing was not diverted")
		}
		_ = c.Close()
	}
	testwait.For(t, "the finished runs' sessions to end", func() bool { return a.agents.Len() == 2 })

	// Everything is older than runs_max_age and max_age.
	ageAll(t, mem, time.Minute)
	sweepOnce(ctx, log, cfg, a.agents, "test")

	alice, bob := layout.For(cfg.MemoryDir, "alice"), layout.For(cfg.MemoryDir, "bob")
	for _, gone := range []string{alice.Run("done"), bob.Run("r1")} {
		if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("finished run %s kept (%v)", gone, err)
		}
	}
	if _, err := os.Stat(alice.Run("r1")); err != nil {
		t.Fatalf("the live run was swept: %v", err)
	}
	if out := callTool(t, worker, "head", map[string]any{"file": output, "lines": 2}); strings.Contains(out, `"error"`) {
		t.Errorf("the worker's stored output after the sweep: %s", short(out))
	}
	if out := callTool(t, worker, "read_artifact", map[string]any{"filename": "plan.md"}); !strings.Contains(out, "alice-live") {
		t.Errorf("the coordinator's artifact after the sweep: %s", short(out))
	}
	if out := callTool(t, worker, "read_scratchpad", map[string]any{}); !strings.Contains(out, "alice-live-note") {
		t.Errorf("the run's pad after the sweep: %s", short(out))
	}

	// Once its agents have gone, the run goes with the next sweep.
	_ = coord.Close()
	_ = worker.Close()
	testwait.For(t, "the live run's sessions to end", func() bool { return a.agents.Len() == 0 })
	ageAll(t, mem, time.Minute)
	sweepOnce(ctx, log, cfg, a.agents, "test")
	if _, err := os.Stat(alice.Run("r1")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("finished run r1 kept (%v)", err)
	}
}

// ageAll makes every file under dir older by d.
func ageAll(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
