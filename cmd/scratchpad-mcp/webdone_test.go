package main

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// TestLoginsDoneReachEveryReplica: a login completed on replica A is
// told to the owner's sessions on A and on B (B holds the session); with
// Redis away A still tells its own.
func TestLoginsDoneReachEveryReplica(t *testing.T) {
	rs := testredis.Start(t)
	var mu sync.Mutex
	heard := map[string][]string{}
	var done []func(owner, server, id string)
	for _, name := range []string{"A", "B"} {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "t", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		done = append(done, relayLoginsDone(st, slog.New(slog.DiscardHandler), func(owner, server, id string) {
			mu.Lock()
			heard[name] = append(heard[name], owner+" "+server+" "+id)
			mu.Unlock()
		}))
	}
	done[0]("bob", "remote", "login-1")
	testwait.For(t, "both replicas to hear bob's login", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(heard["A"]) == 1 && len(heard["B"]) == 1
	})
	mu.Lock()
	if heard["B"][0] != "bob remote login-1" {
		t.Errorf("B heard %v", heard["B"])
	}
	mu.Unlock()
	rs.Kill()
	done[0]("bob", "remote", "login-2")
	mu.Lock()
	defer mu.Unlock()
	if n := len(heard["A"]); n != 2 || heard["A"][1] != "bob remote login-2" {
		t.Errorf("with Redis away A heard %v, want its own login told at once", heard["A"])
	}
}
