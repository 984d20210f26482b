package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// TestServeLeavesOutAServerWithAMissingVariable (issue 58): a config whose
// one server needs an unset {{ env.NAME }} serves the other servers (a
// desktop client lost every tool when the process exited); the left-out
// server's tools' calls name the variable, and so does the log.
func TestServeLeavesOutAServerWithAMissingVariable(t *testing.T) {
	const unset = "SCRATCHPAD_SERVE_TEST_UNSET_TOKEN"
	cfg, _ := writeConfig(t, `
[mcp.servers.gh]
cmd = ["gh-mcp-never-started"]
env = { GITHUB_TOKEN = "{{ env.`+unset+` }}" }
prefix = "gh"
`)
	cmd := exec.Command(binary(t), "serve", "--config", cfg)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, unset+"=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var log lockedLog
	cmd.Stderr = &log
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	defer cs.Close()
	waitForTool(t, cs, "listing")
	if out := callTool(t, cs, "echo", map[string]any{"text": "still here"}); !strings.Contains(out, "still here") {
		t.Errorf("echo answered %q", out)
	}
	for _, name := range []string{"gh__create_issue", "create_issue"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := text(res); !res.IsError || !strings.Contains(got, "gh (not loaded: environment variable "+unset+" is not set") {
			t.Errorf("%s answered (isError %v) %q, want a tool error naming gh and %s", name, res.IsError, got, unset)
		}
	}
	testwait.For(t, "the warning naming the server and the variable", func() bool {
		l := log.String()
		return strings.Contains(l, "level=WARN") && strings.Contains(l, "server=gh") && strings.Contains(l, unset)
	})
}
