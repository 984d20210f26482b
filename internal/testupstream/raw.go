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
// with [RawErrors]. Two more tools test cancellation of its own request:
// ask_then_cancel sends sampling/createMessage (id "s-1") and waits; a
// notifications/roots/list_changed then makes it send
// notifications/cancelled for "s-1", and release answers both calls.
// Each step waits for the client, so no message races another. Outside
// ask_then_cancel, notifications/roots/list_changed makes it ask
// roots/list outside any call; the answer is logged (notifications/message)
// and last_roots returns it. (mcp-go's
// server cannot cancel a request it sent.)
func runRaw(in io.Reader, out io.Writer) {
	r := bufio.NewReader(in)
	w := json.NewEncoder(out)
	var asking json.RawMessage // the ask_then_cancel call waiting for release
	lastRoots := "none"        // the answer to our last roots/list
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method == "" {
			if string(m.ID) == `"r-1"` {
				lastRoots = string(m.Result) + string(m.Error)
				// Says so at once: a call to last_roots could be taken
				// for the call the request belongs to.
				_ = w.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "warning", "logger": "raw", "data": "roots/list answered " + lastRoots}})
			}
			continue
		}
		if len(m.ID) == 0 {
			if m.Method == "notifications/roots/list_changed" {
				if asking != nil {
					_ = w.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "s-1", "reason": "changed my mind"}})
				} else {
					// Outside any call, as a server that tracks roots does.
					_ = w.Encode(map[string]any{"jsonrpc": "2.0", "id": "r-1", "method": "roots/list"})
				}
			}
			continue
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		switch m.Method {
		case "initialize":
			reply["result"] = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			reply["result"] = json.RawMessage(`{"tools":[{"name":"coded_error","description":"fails with a JSON-RPC error of its own","inputSchema":{"type":"object"}},` +
				`{"name":"ask_then_cancel","description":"asks the client for sampling, then waits for release","inputSchema":{"type":"object"}},` +
				`{"name":"release","description":"ends ask_then_cancel and itself","inputSchema":{"type":"object"}},` +
				`{"name":"last_roots","description":"the answer to the roots/list sent when roots last changed outside a call","inputSchema":{"type":"object"}},` +
				`{"name":"progress","description":"sends three progress notifications, then at once its result","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			switch m.Params.Name {
			case "ask_then_cancel":
				asking = m.ID
				if w.Encode(map[string]any{"jsonrpc": "2.0", "id": "s-1", "method": "sampling/createMessage",
					"params": map[string]any{"messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "never mind"}}}, "maxTokens": 5}}) != nil {
					return
				}
				continue
			case "release":
				if asking != nil {
					_ = w.Encode(map[string]any{"jsonrpc": "2.0", "id": asking, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": "asked and cancelled"}}}})
					asking = nil
				}
				reply["result"] = json.RawMessage(`{"content":[{"type":"text","text":"released"}]}`)
			case "progress":
				for i := 1; i <= 3 && len(m.Params.Meta.ProgressToken) > 0; i++ {
					_ = w.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": m.Params.Meta.ProgressToken, "progress": i, "total": 3}})
				}
				reply["result"] = json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
			case "last_roots":
				reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": lastRoots}}}
			default:
				reply["error"] = json.RawMessage(RawErrors["tools/call"])
			}
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
