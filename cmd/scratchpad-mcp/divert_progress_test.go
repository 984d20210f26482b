package main

import (
	"context"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A multi-second divert tells a caller that gave a progress token what it
// is doing (issue 38, item 12): through the binary, over stdio and
// streamable HTTP, with a 2025 session and a 2026-07-28 request, a 20 MB
// output's call gets scratchpad-mcp's own progress notifications,
// increasing, before its result: the bytes it stores, then that it counts
// them.
func TestDivertSendsProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("20 MB through the binary")
	}
	cfg := blobConfig(t)
	for _, tc := range []struct{ transport, version string }{
		{"stdio", protocolVersion},
		{"http", protocolVersion},
		{"http", "2026-07-28"},
		{"stdio", "2026-07-28"},
	} {
		transport := tc.transport
		t.Run(transport+" "+tc.version, func(t *testing.T) {
			var mu sync.Mutex
			var got []*mcp.ProgressNotificationParams
			opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				got = append(got, r.Params)
				mu.Unlock()
			}}
			var tr mcp.Transport = &mcp.CommandTransport{Command: exec.Command(binary(t), "serve", "--config", cfg)}
			if transport == "http" {
				tr = &mcp.StreamableClientTransport{Endpoint: startHTTP(t, "http", cfg) + "/mcp"}
			}
			c := connectWith(t, tr, opts, tc.version)
			defer c.Close()
			waitForTool(t, c, "blob")
			params := &mcp.CallToolParams{Name: "blob", Arguments: map[string]any{"mb": 20, "format": "json"}}
			params.SetProgressToken("big")
			res, err := c.CallTool(t.Context(), params)
			if err != nil {
				t.Fatal(err)
			}
			if meta, _ := res.Meta["scratchpad/diverted"].(map[string]any); res.IsError || meta == nil {
				t.Fatalf("not diverted: %.300s", text(res))
			}
			mu.Lock()
			defer mu.Unlock()
			var msgs []string
			last := -1.0
			for _, p := range got {
				if p.ProgressToken != "big" {
					t.Fatalf("progress under token %v, want big", p.ProgressToken)
				}
				if p.Progress <= last {
					t.Fatalf("progress went from %v to %v", last, p.Progress)
				}
				last = p.Progress
				msgs = append(msgs, p.Message)
			}
			all := strings.Join(msgs, "\n")
			t.Logf("progress:\n%s", all)
			// What a person watching wants: the bytes being stored, then
			// that they are stored and being counted.
			stored := regexp.MustCompile(`(?s)scratchpad-mcp: storing (\d{2},\d{3},\d{3}) bytes\n.*scratchpad-mcp: stored (\d{2},\d{3},\d{3}) bytes as \S+; counting their tokens`)
			if !stored.MatchString(all) {
				t.Fatalf("the divert's progress does not say what it stores, then counts; got %q", msgs)
			}
		})
	}
}
