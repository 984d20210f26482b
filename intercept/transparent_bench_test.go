package intercept

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// BenchmarkTransparent measures what the proxy adds to requests it only
// forwards: the same request to the upstream directly (stdio) and through
// the proxy (stdio upstream) with a stdio front and a streamable HTTP
// front.
//
//	go test -run XXX -bench Transparent -benchtime 200x ./intercept/
func BenchmarkTransparent(b *testing.B) {
	requests := []struct {
		name string
		do   func(context.Context, *client.Client) error
	}{
		{"tools_call_mixed", func(ctx context.Context, c *client.Client) error {
			req := mcp.CallToolRequest{}
			req.Params.Name = "mixed"
			_, err := c.CallTool(ctx, req)
			return err
		}},
		{"resources_read_blob", func(ctx context.Context, c *client.Client) error {
			req := mcp.ReadResourceRequest{}
			req.Params.URI = testupstream.BlobURI
			_, err := c.ReadResource(ctx, req)
			return err
		}},
		{"prompts_get", func(ctx context.Context, c *client.Client) error {
			req := mcp.GetPromptRequest{}
			req.Params.Name = testupstream.PromptName
			req.Params.Arguments = map[string]string{"name": "ada"}
			_, err := c.GetPrompt(ctx, req)
			return err
		}},
	}
	for _, via := range []string{"direct", "proxy_stdio", "proxy_http"} {
		b.Run(via, func(b *testing.B) {
			var c *client.Client
			if via == "direct" {
				c = directTo(b, nil)
			} else {
				p := startProxy(b, stdioUpstream("up", nil))
				c = connectFront(b, p, via[len("proxy_"):], nil)
				waitTool(b, c, "mixed")
			}
			ctx := context.Background()
			for _, rq := range requests {
				b.Run(rq.name, func(b *testing.B) {
					for i := 0; i < b.N; i++ {
						if err := rq.do(ctx, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
