package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

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
			var tr transport.Interface
			var err error
			switch kind {
			case "stdio":
				tr = transport.NewStdio(binary(t), os.Environ(), "serve", "--config", cfg, "--log-level", "error")
			case "http":
				tr, err = transport.NewStreamableHTTP(startHTTP(t, kind, cfg) + "/mcp")
			case "sse":
				tr, err = transport.NewSSE(startHTTP(t, kind, cfg) + "/sse")
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := tr.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			send := func(id int64, method, params string) *transport.JSONRPCResponse {
				t.Helper()
				resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(id), Method: method, Params: json.RawMessage(params)})
				if err != nil {
					t.Fatalf("%s: %v", method, err)
				}
				return resp
			}
			send(1, "initialize", `{"protocolVersion":"`+mcp.LATEST_LEGACY_PROTOCOL_VERSION+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
			_ = tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}})
			// tools/list waits for upstreams that are still starting.
			send(2, "tools/list", `{}`)
			resp := send(3, "tools/call", `{"name":"coded_error","arguments":{}}`)
			if resp.Error == nil {
				t.Fatalf("want an error, got %s", resp.Result)
			}
			got, _ := json.Marshal(resp.Error)
			var a, b any
			_ = json.Unmarshal(got, &a)
			_ = json.Unmarshal([]byte(testupstream.RawErrors["tools/call"]), &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("error through scratchpad-mcp:\n%s\nupstream sent:\n%s", got, testupstream.RawErrors["tools/call"])
			}
		})
	}
}
