package agents

import (
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// A Redis pad id follows the file layout's identity: the run's pad with
// scope "run", the agent's own otherwise. An owner cannot reach another
// owner's pad or break the key's hash tag.
func TestPadID(t *testing.T) {
	tests := []struct {
		scope string
		id    Identity
		want  string
	}{
		{config.ScopeRun, Identity{Agent: "alice", Run: "r1"}, "run:r1"},
		{config.ScopeRun, Identity{Agent: "alice", Run: "r1", Owner: "team"}, "owner:team/run:r1"},
		{config.ScopeRun, Identity{Agent: "alice"}, "agent:alice"},
		{config.ScopeAgent, Identity{Agent: "alice", Run: "r1"}, "agent:alice"},
		{config.ScopeAgent, Identity{Agent: "alice", Owner: "team-a"}, "owner:team-a/agent:alice"},
		{config.ScopeAgent, Identity{Agent: "alice", Owner: "x/y{z}"}, "owner:x%2Fy%7Bz%7D/agent:alice"},
	}
	for _, tt := range tests {
		if got := layout.PadID(tt.id.Owner, tt.id.PadRun(tt.scope), tt.id.Agent); got != tt.want {
			t.Errorf("PadID(%s, %+v) = %q, want %q", tt.scope, tt.id, got, tt.want)
		}
	}
}
