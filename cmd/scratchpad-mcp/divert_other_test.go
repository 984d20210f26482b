package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// Divert covers resources and prompts (issue 53): a resources/read or a
// prompts/get result above its server's threshold ("*" here; the method
// names "resources/read" and "prompts/get" for their own) comes back as a
// pointer in its kind's shape, and the stored file explores like a
// tool's; a small one passes through. Both eras.
func TestDivertResourcesAndPrompts(t *testing.T) {
	cfg, _ := writeConfig(t, fmt.Sprintf("\n[mcp.servers.leaky]\ntransport = \"stdio\"\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = %q }\nprotocol = \"2025-11-25\"\n\n[mcp.servers.leaky.scratchpad]\n\"*\" = 1000\n", upstreamCmd(), testupstream.LeakyMode))
	base := startHTTP(t, "http", cfg)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			var cs *mcp.ClientSession
			if version == "2026-07-28" {
				cs = modernClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "other-" + version})
			} else {
				cs = httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "other-" + version})
			}
			waitForTool(t, cs, "leak_split")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "leak://big"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "diverted to the scratchpad") || rr.Contents[0].URI != "leak://big" {
				t.Fatalf("the big resource: %+v", rr.Contents)
			}
			file := storedName.FindStringSubmatch(rr.Contents[0].Text)
			if file == nil {
				t.Fatalf("no file in %s", rr.Contents[0].Text)
			}
			if out := callTool(t, cs, "get_in", map[string]any{"file": filepath.Base(file[1]), "path": "$.items[0].metadata.name"}); !strings.Contains(out, "web-0") {
				t.Errorf("get_in on the stored resource: %s", short(out))
			}
			small, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "leak://config"})
			if err != nil || len(small.Contents) != 1 || !strings.HasPrefix(small.Contents[0].Text, "session=") {
				t.Errorf("the small resource: %+v %v", small, err)
			}
			pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "big_prompt"})
			if err != nil {
				t.Fatal(err)
			}
			if len(pr.Messages) != 1 {
				t.Fatalf("the big prompt: %+v", pr)
			}
			if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "diverted to the scratchpad") {
				t.Errorf("the big prompt's message: %+v", pr.Messages[0].Content)
			}
		})
	}
}
