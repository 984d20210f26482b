package testupstream

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
)

// RawErrors are the JSON-RPC errors the "raw" upstream answers with, by
// method: codes and data no mcp-go handler can produce, which a proxy
// must pass on unchanged.
var RawErrors = map[string]string{
	"tools/call":     `{"code":-32099,"message":"rate limited: try again in 3 s","data":{"retryAfter":3,"scope":"tenant <a&b>"}}`,
	"resources/read": `{"code":-32002,"message":"Resource not found","data":{"uri":"raw://gone"}}`,
	"prompts/get":    `{"code":-32602,"message":"unknown argument \"colour\""}`,
}

// RawMode is the [EnvMode] value that runs the raw upstream.
const RawMode = "raw"

// runRaw is an MCP server written by hand, without mcp-go, on stdio: it
// lists one tool, one resource and one prompt, and answers their calls
// with [RawErrors].
func runRaw(in io.Reader, out io.Writer) {
	r := bufio.NewReader(in)
	w := json.NewEncoder(out)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue // notifications and responses
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		switch m.Method {
		case "initialize":
			reply["result"] = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			reply["result"] = json.RawMessage(`{"tools":[{"name":"coded_error","description":"fails with a JSON-RPC error of its own","inputSchema":{"type":"object"}}]}`)
		case "resources/list":
			reply["result"] = json.RawMessage(`{"resources":[{"uri":"raw://gone","name":"gone"}]}`)
		case "resources/templates/list":
			reply["result"] = json.RawMessage(`{"resourceTemplates":[]}`)
		case "prompts/list":
			reply["result"] = json.RawMessage(`{"prompts":[{"name":"strict","arguments":[{"name":"color"}]}]}`)
		case "ping", "logging/setLevel":
			reply["result"] = json.RawMessage(`{}`)
		default:
			if e, ok := RawErrors[m.Method]; ok {
				reply["error"] = json.RawMessage(e)
			} else {
				reply["error"] = map[string]any{"code": -32601, "message": "Method not found"}
			}
		}
		if w.Encode(reply) != nil {
			return
		}
	}
}

func maybeRunRaw() {
	if os.Getenv(EnvMode) == RawMode {
		runRaw(os.Stdin, os.Stdout)
		os.Exit(0)
	}
}
