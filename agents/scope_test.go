package agents

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// A run may not take a name of the layout: a run "owners" without tokens
// would read every owner's things.
func TestReservedRunsAndOwners(t *testing.T) {
	for _, run := range []string{"owners", "agents", "pad", "scratchpad", "usage.jsonl"} {
		if _, err := (Identity{Run: run}).Normalize(); err == nil {
			t.Errorf("run %q accepted", run)
		}
	}
	for _, owner := range []string{"..", "a/b", "a b", strings.Repeat("x", 65)} {
		if _, err := (Identity{Owner: owner}).Normalize(); err == nil {
			t.Errorf("owner %q accepted", owner)
		}
	}
}

// Every agent its own pad, per owner and agent name; a run's pad shared
// by the run's agents of one owner: the same rule on files and on Redis.
func TestPadScopesOnBothBackends(t *testing.T) {
	srv := testredis.Start(t)
	for _, backend := range []string{config.BackendFile, config.BackendRedis} {
		for _, scope := range []string{config.ScopeAgent, config.ScopeRun} {
			t.Run(backend+"/"+scope, func(t *testing.T) {
				cfg := config.Default()
				cfg.MemoryDir = t.TempDir()
				cfg.Pad.Backend = backend
				cfg.Pad.Scope = scope
				if backend == config.BackendRedis {
					cfg.Pad.RedisURL = srv.URL()
					cfg.Pad.RedisPrefix = "t-" + scope
				}
				reg := newRegistry(t, cfg)
				ids := []Identity{
					{Agent: "main"}, {Agent: "research"},
					{Agent: "main", Owner: "alice"}, {Agent: "research", Owner: "alice"},
					{Agent: "main", Owner: "bob"},
					{Agent: "w1", Run: "r1", Owner: "alice"}, {Agent: "w2", Run: "r1", Owner: "alice"},
					{Agent: "w1", Run: "r1", Owner: "bob"}, {Agent: "w1", Run: "r1"},
				}
				note := func(id Identity) string { return fmt.Sprintf("note of %s/%s/%s", id.Owner, id.Run, id.Agent) }
				ctxs := make([]context.Context, len(ids))
				for i, id := range ids {
					ctxs[i] = sessionCtx(t, reg, fmt.Sprint("s", i), id)
					a, err := reg.Resolve(ctxs[i])
					if err != nil {
						t.Fatal(err)
					}
					p, err := a.Pad()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := p.Append(note(id), nil); err != nil {
						t.Fatal(err)
					}
				}
				// Who sees whose notes: the same pad means the same key.
				padKey := func(id Identity) string {
					if scope == config.ScopeRun && id.Run != "" {
						return id.Owner + "/run/" + id.Run
					}
					return id.Owner + "/agent/" + id.Agent
				}
				for i, id := range ids {
					a, err := reg.Resolve(ctxs[i])
					if err != nil {
						t.Fatal(err)
					}
					p, _ := a.Pad()
					text, err := p.Read(nil)
					if err != nil {
						t.Fatal(err)
					}
					for _, other := range ids {
						same := padKey(other) == padKey(id)
						if got := strings.Contains(text, note(other)); got != same {
							t.Errorf("%+v sees %q: %v, want %v", id, note(other), got, same)
						}
					}
				}
			})
		}
	}
}
