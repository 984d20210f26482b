package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernMeta is the 2026-07-28 envelope of a raw request's params.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// smuggled are requests whose body names a member twice, or in another
// case (or by Unicode folding), next to the exact one a gateway reads:
// encoding/json would take the variant (CVE-2026-27896's class). Each is
// refused before anything runs, naming the key; the upstream's "pid"
// (standing for a tool the gateway would forbid) never runs.
var smuggled = []struct {
	name, method, mcpName, params, key string
}{
	{"Name", "tools/call", "echo", `{"name":"echo","Name":"pid","arguments":{"text":"hi"}}`, `"Name"`},
	{"NAME", "tools/call", "echo", `{"name":"echo","NAME":"pid","arguments":{"text":"hi"}}`, `"NAME"`},
	{"escaped", "tools/call", "echo", `{"name":"echo","\u004eame":"pid","arguments":{"text":"hi"}}`, `"Name"`},
	{"twice", "tools/call", "echo", `{"name":"echo","name":"pid","arguments":{"text":"hi"}}`, `"name"`},
	{"long s", "tools/call", "echo", `{"name":"echo","arguments":{"text":"hi"},"argumentſ":{"text":"bye"}}`, `"argumentſ"`},
	{"own tool", "tools/call", "read_scratchpad", `{"name":"read_scratchpad","Name":"pid"}`, `"Name"`},
	{"URI", "resources/read", "scratchpad://pad", `{"uri":"scratchpad://pad","URI":"file:///etc/passwd"}`, `"URI"`},
	{"prompt", "prompts/get", "p", `{"name":"p","Name":"q"}`, `"Name"`},
	{"method", "tools/list", "", `{}`, ""}, // the message's own Method: below
}

// withMeta puts the 2026-07-28 envelope into params (an object).
func withMeta(params string) string {
	if params == "{}" {
		return "{" + modernMeta + "}"
	}
	return strings.TrimSuffix(params, "}") + "," + modernMeta + "}"
}

// postRaw POSTs body to url with headers; status and body.
func postRaw(t *testing.T, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		headers["Mcp-Session-Id"] = sid
	}
	return resp.StatusCode, string(b)
}

// rpcErrorOf is the JSON-RPC error code and message in an answer (a JSON
// body or an event stream's data line); 0 when there is none.
func rpcErrorOf(body string) (int, string) {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		var m struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Error != nil {
			return m.Error.Code, m.Error.Message
		}
	}
	return 0, ""
}

func TestSmuggledNamesRefusedHTTP(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	url := base + "/mcp"

	t.Run("2026-07-28", func(t *testing.T) {
		h := func(method, name string) map[string]string {
			m := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
			if name != "" {
				m["Mcp-Name"] = name
			}
			return m
		}
		// The harness: the exact request runs.
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, body := postRaw(t, url, h("tools/call", "echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+withMeta(`{"name":"echo","arguments":{"text":"hi"}}`)+`}`)
			if st == 200 && strings.Contains(body, `"hi"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the exact call: %d %s", st, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, tc := range smuggled {
			params := withMeta(tc.params)
			msg := `{"jsonrpc":"2.0","id":2,"method":"` + tc.method + `","params":` + params + `}`
			key, wantCode := tc.key, -32602
			if tc.name == "method" {
				msg = `{"jsonrpc":"2.0","id":2,"method":"tools/list","Method":"tools/call","params":` + params + `}`
				key, wantCode = `"Method"`, -32600
			}
			st, body := postRaw(t, url, h(tc.method, tc.mcpName), msg)
			code, text := rpcErrorOf(body)
			if st != http.StatusBadRequest || code != wantCode || !strings.Contains(text, key) {
				t.Errorf("%s: %d %s, want 400 %d naming %s", tc.name, st, body, wantCode, key)
			}
		}
	})

	t.Run("2025-11-25", func(t *testing.T) {
		hd := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
		st, body := postRaw(t, url, hd, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if st != 200 || hd["Mcp-Session-Id"] == "" {
			t.Fatalf("initialize: %d %s", st, body)
		}
		postRaw(t, url, hd, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for _, tc := range smuggled {
			if tc.name == "method" {
				continue
			}
			st, body := postRaw(t, url, hd, `{"jsonrpc":"2.0","id":3,"method":"`+tc.method+`","params":`+tc.params+`}`)
			code, text := rpcErrorOf(body)
			if st != http.StatusBadRequest || code != -32602 || !strings.Contains(text, tc.key) {
				t.Errorf("%s: %d %s, want 400 -32602 naming %s", tc.name, st, body, tc.key)
			}
		}
	})
}

// Over stdio, both eras: each smuggled line is answered with the error
// naming the key, and the connection serves on.
func TestSmuggledNamesRefusedStdio(t *testing.T) {
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			cfg, _ := writeConfig(t, "")
			in, lines := serveLines(t, cfg)
			answers := make(chan string, 64)
			go func() {
				for l := range lines {
					if strings.Contains(l, `"id"`) && !strings.Contains(l, `"method"`) {
						answers <- l
					}
				}
				close(answers)
			}()
			next := func() string {
				t.Helper()
				select {
				case s := <-answers:
					return s
				case <-time.After(30 * time.Second):
					t.Fatal("no answer")
					return ""
				}
			}
			wrap := func(p string) string { return p }
			if era == "2025-11-25" {
				fmt.Fprintln(in, `{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				next()
				fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			} else {
				wrap = withMeta
			}
			for i, tc := range smuggled {
				if tc.name == "method" {
					continue
				}
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", 100+i, tc.method, wrap(tc.params))
				got := next()
				code, text := rpcErrorOf(got)
				if code != -32602 || !strings.Contains(text, tc.key) || !strings.Contains(got, fmt.Sprintf(`"id":%d`, 100+i)) {
					t.Errorf("%s: %s, want -32602 naming %s", tc.name, got, tc.key)
				}
			}
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":%s}`+"\n", wrap(`{}`))
			if got := next(); !strings.Contains(got, `"id":9`) || !strings.Contains(got, `"tools"`) {
				t.Fatalf("after the refusals, tools/list: %s", got)
			}
		})
	}
}

// call_tool's own arguments are decoded the same way: a name beside its
// case variant is a tool error the model can act on, and nothing runs.
func TestSmuggledCallToolArguments(t *testing.T) {
	cfg := searchConfig(t)
	cs := connect(t, &mcp.CommandTransport{Command: exec.Command(binary(t), "serve", "--config", cfg)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, args := range []json.RawMessage{
		json.RawMessage(`{"name":"echo","Name":"pid","arguments":{"text":"hi"}}`),
		json.RawMessage(`{"name":"echo","arguments":{"text":"hi"},"argumentſ":{}}`),
		json.RawMessage(`{"name":"pid","name":"echo","arguments":{"text":"hi"}}`),
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: args})
		if err != nil {
			// Over the wire, the duplicate is refused before call_tool.
			if !bytes.Contains(args, []byte(`"name":"pid","name"`)) || !strings.Contains(err.Error(), "twice") {
				t.Errorf("%s: %v", args, err)
			}
			continue
		}
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "call_tool") || !strings.Contains(text, "case variant") {
			t.Errorf("%s: %s", args, text)
		}
	}
}

// resultText joins a result's text content.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
