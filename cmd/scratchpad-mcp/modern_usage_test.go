package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// modernClient connects a go-sdk client speaking 2026-07-28 (no session)
// to url, sending headers with every request.
func modernClient(t *testing.T, url string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{headers, http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A 2026-07-28 client has no session to end: its agent is one across its
// requests (the budget runs on: "left" falls from call to call), and its
// usage record — every call counted — is written once it has been idle
// past --session-ttl, without any DELETE.
func TestModernAgentUsageWithoutSession(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg, "--session-ttl", "1s")
	c := modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "modern1"})
	waitForTool(t, c, "listing")
	out := callTool(t, c, "listing", map[string]any{"n": bigListing})
	if !strings.Contains(out, "file: ") {
		t.Fatalf("not diverted: %s", short(out))
	}
	left1, _ := leftOf(t, callTool(t, c, "head", map[string]any{"file": filepath.Base(firstFile(t, filepath.Join(mem, "scratchpad"))), "lines": 5}))
	left2, _ := leftOf(t, callTool(t, c, "head", map[string]any{"file": filepath.Base(firstFile(t, filepath.Join(mem, "scratchpad"))), "lines": 5}))
	if left2 >= left1 {
		t.Errorf("left %d then %d: the budget did not run on across requests", left1, left2)
	}
	var recs []budget.Usage
	testwait.For(t, "the idle agent's usage record", func() bool {
		recs, _ = budget.ReadUsage(filepath.Join(mem, "usage.jsonl"), "")
		return len(recs) > 0
	})
	if len(recs) != 1 || recs[0].AgentName != "modern1" || recs[0].Calls < 3 || recs[0].TokensIntercepted == 0 {
		t.Fatalf("records %+v, want one for modern1 with its calls", recs)
	}
}
