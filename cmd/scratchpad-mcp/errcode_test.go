package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestServeKeepsUpstreamErrorCodes calls, through the built binary served
// over stdio, streamable HTTP and SSE, an upstream that fails with a
// JSON-RPC error of its own, and expects that error unchanged: code,
// message and data.
func TestServeKeepsUpstreamErrorCodes(t *testing.T) {
	cfg, _ := writeConfig(t, fmt.Sprintf(`
[mcp.servers.raw]
transport = "stdio"
cmd = [%q]
env = { SCRATCHPAD_TESTUPSTREAM = %q }
`, upstreamCmd(), testupstream.RawMode))
	for _, kind := range []string{"stdio", "http", "sse"} {
		t.Run(kind, func(t *testing.T) {
			var tr mcp.Transport
			switch kind {
			case "stdio":
				tr = &mcp.CommandTransport{Command: exec.Command(binary(t), "serve", "--config", cfg, "--log-level", "error")}
			case "http":
				tr = &mcp.StreamableClientTransport{Endpoint: startHTTP(t, kind, cfg) + "/mcp"}
			case "sse":
				tr = &mcp.SSEClientTransport{Endpoint: startHTTP(t, kind, cfg) + "/sse"}
			}
			c := connect(t, tr)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// tools/list waits for upstreams that are still starting.
			if _, err := c.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "coded_error", Arguments: map[string]any{}})
			if err == nil {
				got, _ := json.Marshal(res)
				t.Fatalf("want an error, got %s", got)
			}
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) {
				t.Fatalf("want a JSON-RPC error, got %T %v", err, err)
			}
			got, _ := json.Marshal(wire)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(testupstream.RawErrors["tools/call"]), &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("error through scratchpad-mcp:\n%s\nupstream sent:\n%s", got, testupstream.RawErrors["tools/call"])
			}
		})
	}
}
