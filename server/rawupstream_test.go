package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// oddTools are tool definitions go-sdk's own AddTool refuses or would
// re-encode: a schema that is not "type":"object", no schema at all, and
// fields no SDK models. The proxy must list them as written.
var oddTools = []string{
	`{"name":"stringly","description":"schema is a string","inputSchema":{"type":"string","minLength":1},"x-vendor":{"keep":[1,2,3]}}`,
	`{"name":"noschema","description":"no inputSchema at all"}`,
	`{"name":"future","inputSchema":{"type":"object","properties":{}},"icons":[{"src":"data:,x"}],"execution":{"taskSupport":"optional"},"_meta":{"a":1}}`,
}

// rawHTTPUpstream is a hand-written streamable-HTTP MCP server that
// answers with plain JSON: what it sends is exactly these bytes.
func rawHTTPUpstream(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		if len(m.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch m.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "raw-1")
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":[` + strings.Join(oddTools, ",") + `]}`
		case "tools/call":
			result = fmt.Sprintf(`{"content":[{"type":"text","text":"%s got %s"}],"x-extra":{"kept":true}}`, m.Params.Name, strings.ReplaceAll(string(m.Params.Arguments), `"`, `'`))
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s"}}`, m.ID, m.Method)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestOddToolDefinitionsPassThrough: tools whose schemas go-sdk would
// refuse are listed byte for byte and can be called; results keep fields
// no SDK models.
func TestOddToolDefinitionsPassThrough(t *testing.T) {
	url := startProxyHTTP(t, config.Server{Name: "raw", Transport: config.TransportHTTPStreamable, URL: rawHTTPUpstream(t), Timeout: 10 * time.Second})
	_, sid := rawPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msgs, _ := rawPost(t, url, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list := string(msgs[len(msgs)-1])
	for _, want := range oddTools[:1] {
		if !strings.Contains(list, want) {
			t.Errorf("tools/list lacks %s\ngot %s", want, list)
		}
	}
	var parsed struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msgs[len(msgs)-1], &parsed); err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, tl := range parsed.Result.Tools {
		if tl.Name == "noschema" {
			listed = true
			if string(tl.InputSchema) != `{"type":"object"}` {
				t.Errorf("a tool without a schema is listed with %s, want {\"type\":\"object\"}", tl.InputSchema)
			}
		}
	}
	if !listed {
		t.Errorf("the tool without a schema is not listed: %s", list)
	}
	if !strings.Contains(list, oddTools[2]) {
		t.Errorf("unknown fields were not kept: %s", list)
	}
	msgs, _ = rawPost(t, url, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"stringly","arguments":{"s":"x"}}}`)
	res := string(msgs[len(msgs)-1])
	if !strings.Contains(res, `"text":"stringly got {'s':'x'}"`) || !strings.Contains(res, `"x-extra":{"kept":true}`) {
		t.Errorf("tools/call through the proxy: %s", res)
	}
}
