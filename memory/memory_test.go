package memory_test

import (
	"flag"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory/memorytest"
)

var update = flag.Bool("update", false, "rewrite the answers of testdata/*.txtar")

// The memory tool's answers, command by command, as golden scripts
// (testdata/*.txtar; go test ./memory -run TestScripts -update rewrites
// them, for review). The pad's backends run the same scripts.
func TestScripts(t *testing.T) {
	memorytest.RunScripts(t, "testdata", func(*testing.T) memory.Store { return memorytest.NewMap() }, *update)
}

// The reference store does what every store must.
func TestMapStore(t *testing.T) {
	memorytest.TestStore(t, func(*testing.T) memory.Store { return memorytest.NewMap() })
}
