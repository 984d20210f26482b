package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// slowGrepArgs is a grep RE2 runs slowly (bounded repeats tried at every
// byte) over big.log as writeSlowLog makes it: minutes to its end.
var slowGrepArgs = map[string]any{"file": "big.log", "pattern": `[^\n]{0,1000}[^\n]{0,1000}[JQ]`}

// writeSlowLog writes big.log (8 MiB of one line repeated) where owner's
// single agents read their stored outputs.
func writeSlowLog(t *testing.T, mem, owner string) {
	t.Helper()
	dir := layout.For(mem, owner).Scratchpad()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("abcdefghik ", 30) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "big.log"), []byte(strings.Repeat(line, (8<<20)/len(line))), 0o600); err != nil {
		t.Fatal(err)
	}
}

// One owner's exploration calls at once are bounded across all its
// sessions ([explore] max_calls_per_owner), not only per agent: with two
// running in two sessions, a third session's call answers busy naming the
// owner's bound, while another owner's call runs; once the sessions
// running them end (DELETE), their calls stop and the owner runs calls
// again.
func TestExplorationBoundedPerOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	cfg, mem, tok := tenancyConfig(t, "\n[explore]\nmax_calls_per_owner = 2\n", "alice", "bob")
	addr, a := serveInProcess(t, cfg)
	base := "http://" + addr
	for _, o := range []string{"alice", "bob"} {
		writeSlowLog(t, mem, o)
	}
	var running []*mcp.ClientSession
	for range 2 {
		c := ownerClient(t, base, tok["alice"], nil)
		running = append(running, c)
		go func() {
			_, _ = c.CallTool(context.Background(), &mcp.CallToolParams{Name: "grep", Arguments: slowGrepArgs})
		}()
	}
	testwait.For(t, "alice's two greps to run", func() bool { return a.agents.Exploring("alice") == 2 })

	third := ownerClient(t, base, tok["alice"], nil)
	if out := callTool(t, third, "grep", slowGrepArgs); !strings.Contains(out, `"error":"busy"`) || !strings.Contains(out, "owner already has 2 exploration calls") {
		t.Fatalf("alice's third call at once, in a third session: %s", short(out))
	}
	bob := ownerClient(t, base, tok["bob"], nil)
	if out := callTool(t, bob, "head", map[string]any{"file": "big.log", "lines": 1}); strings.Contains(out, `"error"`) {
		t.Fatalf("bob's call while alice is at her bound: %s", short(out))
	}
	for _, c := range running {
		// DELETE: its grep is cancelled. (go-sdk's Close would wait for
		// the client's calls in flight before it sends it.)
		deleteSession(t, base, tok["alice"], c.ID())
	}
	testwait.For(t, "alice's greps to stop once their sessions ended", func() bool { return a.agents.Exploring("alice") == 0 })
	if out := callTool(t, third, "head", map[string]any{"file": "big.log", "lines": 1}); strings.Contains(out, `"error"`) {
		t.Fatalf("alice's call once her calls ended: %s", short(out))
	}
}

// deleteSession ends a streamable HTTP session with DELETE.
func deleteSession(t *testing.T, base, token, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, base+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := (&http.Client{Timeout: testwait.Timeout}).Do(req)
	if err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d", resp.StatusCode)
	}
}

// What one owner's running exploration calls cost another owner's
// requests: bob's ping times while alice runs 0, 2, 4, 8 and 16 slow
// greps at once (the figures behind explore.DefaultOwnerConcurrency). A
// measurement, not a check: SCRATCHPAD_LATENCY=1 runs it.
func TestOtherOwnersLatencyUnderExploration(t *testing.T) {
	if os.Getenv("SCRATCHPAD_LATENCY") == "" {
		t.Skip("a measurement: SCRATCHPAD_LATENCY=1 runs it")
	}
	cfg, mem, tok := tenancyConfig(t, "\n[explore]\nmax_calls_per_owner = 64\n", "alice", "bob")
	addr, a := serveInProcess(t, cfg)
	base := "http://" + addr
	writeSlowLog(t, mem, "alice")
	bob := ownerClient(t, base, tok["bob"], nil)
	var running []*mcp.ClientSession
	defer func() {
		for _, c := range running {
			deleteSession(t, base, tok["alice"], c.ID()) // its grep stops
		}
	}()
	for _, n := range []int{0, 2, 4, 8, 16} {
		for len(running) < n {
			c := ownerClient(t, base, tok["alice"], nil)
			running = append(running, c)
			go func() {
				_, _ = c.CallTool(context.Background(), &mcp.CallToolParams{Name: "grep", Arguments: slowGrepArgs})
			}()
		}
		testwait.For(t, "alice's greps to run", func() bool { return a.agents.Exploring("alice") == n })
		var took []time.Duration
		for range 40 {
			start := time.Now()
			if err := bob.Ping(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(start))
			time.Sleep(20 * time.Millisecond)
		}
		slices.Sort(took)
		t.Logf("%d cores, alice running %2d greps: bob's ping median %v, p90 %v, max %v", runtime.NumCPU(), n,
			took[len(took)/2].Round(10*time.Microsecond), took[len(took)*9/10].Round(10*time.Microsecond), took[len(took)-1].Round(10*time.Microsecond))
	}
}
