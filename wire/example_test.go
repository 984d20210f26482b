package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// A 2026-07-28 request over HTTP, checked in go-sdk's order.
func Example() {
	h := http.Header{}
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", "tools/call")
	h.Set("Mcp-Name", "echo")
	params := json.RawMessage(`{"name":"echo","arguments":{},"_meta":{
		"io.modelcontextprotocol/protocolVersion":"2026-07-28",
		"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`)

	era, werr := wire.Classify(h, params)
	if werr == nil {
		werr = wire.CheckHeaders(h, "tools/call", params, nil)
	}
	var env wire.Envelope
	if werr == nil {
		env, werr = wire.ParseEnvelope(params)
	}
	if werr == nil {
		werr = wire.CheckMethod(era, "tools/call")
	}
	fmt.Println(era, env.Version, env.Caps.Allows("elicitation/create"), werr == nil)

	h.Set("Mcp-Name", "other")
	werr = wire.CheckHeaders(h, "tools/call", params, nil)
	fmt.Println(werr.Code, werr.Status)
	// Output:
	// 2026-07-28 2026-07-28 true true
	// -32020 400
}

func ExampleStamp() {
	upstream := []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"_meta":{"trace":"t1"}}`)
	out, _ := wire.Stamp(upstream, wire.Stamping{
		ResultType: wire.ResultComplete,
		ServerInfo: json.RawMessage(`{"name":"scratchpad-mcp","version":"1"}`),
		Cache:      &wire.Cache{TTLMs: 0, Scope: wire.ScopePrivate},
	})
	fmt.Println(string(out))
	// Output:
	// {"tools":[{"name":"echo","inputSchema":{"type":"object"}}],"_meta":{"trace":"t1","io.modelcontextprotocol/serverInfo":{"name":"scratchpad-mcp","version":"1"}},"resultType":"complete","ttlMs":0,"cacheScope":"private"}
}

func ExampleUnsupportedVersion() {
	e := wire.UnsupportedVersion("v999.0.0")
	fmt.Println(e.Code, e.Status, string(e.Data))
	// Output:
	// -32022 400 {"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"v999.0.0"}
}
