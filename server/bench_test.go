package server_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// BenchmarkTransparent measures what the server adds to requests it only
// forwards: the same request to the upstream directly (stdio) and
// through the server (stdio upstream) served over stdio, streamable HTTP
// and SSE.
//
//	go test -run XXX -bench Transparent -benchtime 200x ./server/
func BenchmarkTransparent(b *testing.B) {
	requests := []struct {
		name string
		do   func(context.Context, *mcp.ClientSession) error
	}{
		{"tools_call_mixed", func(ctx context.Context, c *mcp.ClientSession) error {
			_, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "mixed", Arguments: map[string]any{}})
			return err
		}},
		{"resources_read_blob", func(ctx context.Context, c *mcp.ClientSession) error {
			_, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: testupstream.BlobURI})
			return err
		}},
		{"prompts_get", func(ctx context.Context, c *mcp.ClientSession) error {
			_, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: testupstream.PromptName, Arguments: map[string]string{"name": "ada"}})
			return err
		}},
	}
	for _, via := range []string{"direct", "stdio", "http", "sse"} {
		b.Run(via, func(b *testing.B) {
			var c *mcp.ClientSession
			if via == "direct" {
				c = direct(b, nil)
			} else {
				c = connect(b, startEnv(b, stdioUpstream("up", nil)), via, nil)
			}
			ctx := context.Background()
			for _, rq := range requests {
				b.Run(rq.name, func(b *testing.B) {
					for b.Loop() {
						if err := rq.do(ctx, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
