package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// searchConfig has three stdio upstreams in search mode: k8s and logs
// found by search, misc always listed.
func searchConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	server := func(name, filter, extra string) string {
		return fmt.Sprintf(`
[mcp.servers.%[1]s]
transport = "stdio"
cmd = [%[2]q]
env = { SCRATCHPAD_TESTUPSTREAM = "stdio" }
prefix = %[1]q
mcp_filter = %[3]s
%[4]s`, name, upstreamCmd(), filter, extra)
	}
	cfg := fmt.Sprintf(`memory_dir = %q

[agent]
model = "gpt-4o"

[catalogue]
mode = "search"
`, filepath.Join(dir, "mem")) +
		server("k8s", `["listing", "pid"]`, "\n[mcp.servers.k8s.scratchpad]\n\"listing\" = 1000\n") +
		server("logs", `["ndjson", "log"]`, "") +
		server("misc", `["echo", "words"]`, `listing = "always"`)
	path := filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Search mode end to end (issue 28), over stdio with three upstreams:
// the listing holds the own tools, search_tools, call_tool and the
// always-listed server's tools only; a search finds a hidden tool, which
// then joins the listing (list_changed); call_tool runs it through the
// path a listed tool takes, so its big result is diverted; a misspelt
// name is answered with the closest names.
func TestSearchModeEndToEnd(t *testing.T) {
	cfg := searchConfig(t)
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "search-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	cmd := exec.Command(binary(t), "serve", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	names := func() []string {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	listed := names()
	for _, want := range []string{"search_tools", "call_tool", "misc__echo", "misc__words", "head", "grep"} {
		if !slices.Contains(listed, want) {
			t.Fatalf("search mode lists %v, without %s", listed, want)
		}
	}
	for _, hidden := range []string{"k8s__listing", "k8s__pid", "logs__ndjson", "logs__log"} {
		if slices.Contains(listed, hidden) {
			t.Fatalf("search mode lists hidden %s: %v", hidden, listed)
		}
	}

	found := callTextOf(t, cs, "search_tools", map[string]any{"query": "kubernetes pod listing"})
	if !strings.Contains(found, "k8s__listing(n: number") {
		t.Fatalf("search: %s", found)
	}
	select {
	case <-changed:
	case <-time.After(testwait.Timeout):
		t.Fatal("no tools/list_changed after a search")
	}
	if !testwait.Until(testwait.Timeout, func() bool { return slices.Contains(names(), "k8s__listing") }) {
		t.Fatalf("the found tool is not listed: %v", names())
	}

	// call_tool: the same path as a listed tool, big results diverted.
	ptr := callTextOf(t, cs, "call_tool", map[string]any{"name": "k8s__listing", "arguments": map[string]any{"n": 300}})
	if !storedName.MatchString(ptr) {
		t.Fatalf("call_tool's big result was not diverted: %.300s", ptr)
	}
	if got := callTextOf(t, cs, "call_tool", map[string]any{"name": "logs__ndjson", "arguments": map[string]any{"n": 2}}); !strings.Contains(got, "request 1 served") {
		t.Fatalf("call_tool of a tool never found: %.300s", got)
	}

	// A misspelt name: the closest, ready to run.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "k8s_listng"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "Closest") || !strings.Contains(text(res), "k8s__listing(n: number") {
		t.Fatalf("misspelt: %s", text(res))
	}
	// describe gives the whole schema.
	if got := callTextOf(t, cs, "search_tools", map[string]any{"describe": "logs__ndjson"}); !strings.Contains(got, `"inputSchema"`) {
		t.Fatalf("describe: %s", got)
	}
}
