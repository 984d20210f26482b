package upstream

import (
	"os"
	"strconv"
)

// DepthEnv is set in the environment of every stdio upstream started: one
// more than this process's own. A scratchpad-mcp started with it set is an
// upstream of a scratchpad-mcp, which is a configuration mistake that
// would otherwise repeat itself without end (the inner one starting its
// own upstreams, itself among them); it refuses to serve.
const DepthEnv = "SCRATCHPAD_MCP_DEPTH"

// Depth is this process's depth: 0 when no scratchpad-mcp started it.
func Depth() int {
	n, err := strconv.Atoi(os.Getenv(DepthEnv))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
