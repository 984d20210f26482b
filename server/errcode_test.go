package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// TestUpstreamErrorCodesReachTheClient drives the server, over every
// serving transport, with a raw JSON-RPC client and compares each error
// with the one the upstream sent: code, message and data unchanged.
func TestUpstreamErrorCodesReachTheClient(t *testing.T) {
	e := startEnv(t, rawUpstream("raw"))
	requests := []struct{ method, params string }{
		{"tools/call", `{"name":"coded_error","arguments":{}}`},
		{"resources/read", `{"uri":"raw://gone"}`},
		{"prompts/get", `{"name":"strict","arguments":{"colour":"red"}}`},
	}
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := rawConnect(t, e, front, `{}`)
			for _, rq := range requests {
				resp, _, err := c.request(rq.method, json.RawMessage(rq.params))
				if err != nil {
					t.Fatalf("%s: %v", rq.method, err)
				}
				if resp.Error == nil {
					t.Fatalf("%s: want an error, got %s", rq.method, resp.Result)
				}
				if want := testupstream.RawErrors[rq.method]; !sameJSON(t, resp.Error, []byte(want)) {
					t.Errorf("%s:\nproxy:    %s\nupstream: %s", rq.method, resp.Error, want)
				}
			}
		})
	}
}

// TestRawErrorsAreNotInternal guards the test above: codes an MCP
// library would turn into -32603 on its own prove nothing.
func TestRawErrorsAreNotInternal(t *testing.T) {
	for m, e := range testupstream.RawErrors {
		var d struct{ Code int }
		_ = json.Unmarshal([]byte(e), &d)
		if d.Code == -32603 {
			t.Errorf("%s: code %d cannot tell a forwarded error from the server's own", m, d.Code)
		}
	}
}

// lastPost records the status and body of the last POST answered.
type lastPost struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (l *lastPost) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	l.mu.Lock()
	l.status, l.body = resp.StatusCode, body
	l.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// TestLatestClientGetsTheUpstreamsErrors: a go-sdk client gets the
// upstream's errors unchanged, in either revision: in 200 answers on a
// 2025-11-25 session, and on 2026-07-28 with the HTTP status go-sdk's
// stateless server gives each code (-32602 is 400).
func TestLatestClientGetsTheUpstreamsErrors(t *testing.T) {
	for _, version := range []string{protocol, wire.Revision20260728} {
		t.Run(version, func(t *testing.T) {
			e := startEnv(t, rawUpstream("raw"))
			rec := &lastPost{}
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Logger: quietLogger(), Capabilities: &mcp.ClientCapabilities{}})
			cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: &http.Client{Transport: rec}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != version {
				t.Errorf("negotiated %s, want %s", v, version)
			}
			ctx := context.Background()
			for _, tc := range []struct {
				method string
				do     func() error
			}{
				{"prompts/get", func() error {
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "strict", Arguments: map[string]string{"colour": "red"}})
					return err
				}},
				{"tools/call", func() error { _, err := callErr(cs, "coded_error", nil); return err }},
				{"resources/read", func() error { _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "raw://gone"}); return err }},
			} {
				if err := tc.do(); err == nil {
					t.Fatalf("%s: want an error", tc.method)
				}
				rec.mu.Lock()
				status, body := rec.status, rec.body
				rec.mu.Unlock()
				// The body is JSON, or an SSE stream.
				for _, line := range bytes.Split(body, []byte("\n")) {
					if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 {
						body = d
					}
				}
				var m struct{ Error json.RawMessage }
				_ = json.Unmarshal(body, &m)
				var code struct{ Code int }
				_ = json.Unmarshal([]byte(testupstream.RawErrors[tc.method]), &code)
				want := http.StatusOK
				if version == wire.Revision20260728 {
					want = wire.StatusOf(code.Code)
				}
				if status != want || len(m.Error) == 0 || !sameJSON(t, m.Error, []byte(testupstream.RawErrors[tc.method])) {
					t.Errorf("%s: HTTP %d %s; want %d %s", tc.method, status, body, want, testupstream.RawErrors[tc.method])
				}
			}
		})
	}
}

// TestUnknownToolNameNotEchoedWhole: a tools/call of a tool nobody has,
// with a name of 200 KB, is answered -32602 quoting at most a short head
// of the name, over every serving transport.
func TestUnknownToolNameNotEchoedWhole(t *testing.T) {
	e := startEnv(t, rawUpstream("raw"))
	name := strings.Repeat("n", 200_000)
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := rawConnect(t, e, front, `{}`)
			params, _ := json.Marshal(map[string]any{"name": name, "arguments": map[string]any{}})
			resp, _, err := c.request("tools/call", json.RawMessage(params))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Error == nil {
				t.Fatalf("want an error, got %.200s", resp.Result)
			}
			var d struct {
				Code    int
				Message string
			}
			_ = json.Unmarshal(resp.Error, &d)
			if d.Code != -32602 || len(d.Message) > 200 || !strings.HasPrefix(d.Message, "unknown tool \"nnn") {
				t.Fatalf("code %d, message of %d bytes: %.200s", d.Code, len(d.Message), d.Message)
			}
		})
	}
}
