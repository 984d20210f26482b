package explore

import (
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// wordCount is the deterministic token counter of the tests: one token per
// whitespace-separated word.
func wordCount(s string) int { return len(strings.Fields(s)) }

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
