package agents

import (
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// TestInstructionsNameTheMemoryTool: the instructions name the memory tool
// by the name it is listed under, and say nothing of it when none is.
func TestInstructionsNameTheMemoryTool(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"memory", "with the memory tool"},
		{"scratchpad_memory", "with the scratchpad_memory tool"},
		{"", ""},
	} {
		var ag config.Agent
		ag.Scratchpad.MemoryTool = tc.name
		got := Instructions(ag)
		if tc.want == "" {
			if strings.Contains(got, "/memories") {
				t.Errorf("no memory tool, yet the instructions say: %s", got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) || !strings.Contains(got, "/memories") {
			t.Errorf("memory tool %q: instructions %s", tc.name, got)
		}
	}
}
