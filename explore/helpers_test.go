package explore

import (
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// wordCount is the deterministic token counter of the tests: one token per
// whitespace-separated word.
func wordCount(s string) int { return len(strings.Fields(s)) }

// text is a result's text.
func text(res tool.Result) string { return res.Text }
