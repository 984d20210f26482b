package intercept

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// frontHandlers answer what the proxy sends a test client.
type frontHandlers struct {
	notify  func(method string, params json.RawMessage)
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// sseFrontClient serves the proxy over legacy SSE (mcp-go's SSE server
// behind Router.OutputHTTP) and connects a client to it that answers the
// server's requests: package upstream's client, since mcp-go's SSE
// client cannot. caps is the client capabilities it declares.
func sseFrontClient(t *testing.T, p *proxy, caps string, h frontHandlers) *upstream.Upstream {
	t.Helper()
	sse := server.NewSSEServer(p.srv, server.WithSSEEndpoint("/sse"), server.WithMessageEndpoint("/message"))
	ts := httptest.NewServer(p.router.OutputHTTP(sse))
	t.Cleanup(ts.Close)
	var offer map[string]any
	if err := json.Unmarshal([]byte(caps), &offer); err != nil {
		t.Fatal(err)
	}
	opts := upstream.Options{
		Server: config.Server{Name: "front", Transport: config.TransportSSE, URL: ts.URL + "/sse", Timeout: 30 * time.Second, RestartMaxAttempts: config.NeverRestart},
		Logger: quietLogger(), ClientName: "sse-front", ClientVersion: "1",
	}
	if h.notify != nil {
		opts.OnNotify = func(_ *upstream.Upstream, method string, params json.RawMessage) { h.notify(method, params) }
	}
	if h.request != nil {
		opts.OnRequest = func(ctx context.Context, _ *upstream.Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
			return h.request(ctx, method, params)
		}
	}
	c := upstream.New(opts)
	c.Start(context.Background(), offer)
	t.Cleanup(c.Close)
	return c
}

func callRaw(t *testing.T, c *upstream.Upstream, tool string) (json.RawMessage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Call(ctx, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
}

// TestSSEClientsAreAskedToo: an upstream's sampling, elicitation and roots
// requests reach a client served over legacy SSE, and its answers (and
// errors, with their codes) go back to the upstream.
func TestSSEClientsAreAskedToo(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	var mu sync.Mutex
	var asked []string
	c := sseFrontClient(t, p, `{"sampling":{},"elicitation":{},"roots":{}}`, frontHandlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		asked = append(asked, method+" "+string(params))
		mu.Unlock()
		switch method {
		case "sampling/createMessage":
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"4"},"model":"sse-model","stopReason":"endTurn"}`), nil
		case "elicitation/create":
			return nil, &RPCError{Code: -32042, Message: "declined by policy"}
		default:
			return json.RawMessage(`{"roots":[{"uri":"file:///work","name":"work"}]}`), nil
		}
	}})
	for _, tc := range []struct{ tool, want string }{
		{"ask_sampling", `sse-model`},
		{"ask_roots", `file:///work`},
		{"ask_elicitation", `declined by policy`},
	} {
		res, err := callRaw(t, c, tc.tool)
		if err != nil {
			t.Fatalf("%s: %v", tc.tool, err)
		}
		if !strings.Contains(string(res), tc.want) {
			t.Errorf("%s: %s lacks %q", tc.tool, res, tc.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 || !strings.Contains(asked[0], `"what is 2+2?"`) {
		t.Errorf("the client was asked %q", asked)
	}
}

// TestSSEClientWithoutCapabilityIsNotAsked: what the SSE client did not
// declare is refused to the upstream, as for other clients.
func TestSSEClientWithoutCapabilityIsNotAsked(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := sseFrontClient(t, p, `{}`, frontHandlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		t.Errorf("asked %s", method)
		return nil, nil
	}})
	res, err := callRaw(t, c, "ask_sampling")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), "did not declare the sampling capability") {
		t.Errorf("result %s", res)
	}
}

// TestSSEClientIsToldOfCancellation: a forwarded request the upstream
// cancels is cancelled at the SSE client.
func TestSSEClientIsToldOfCancellation(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	asked := make(chan struct{}, 1)
	cancelled := make(chan error, 1)
	c := sseFrontClient(t, p, `{"sampling":{},"roots":{"listChanged":true}}`, frontHandlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		asked <- struct{}{}
		select {
		case <-ctx.Done():
			cancelled <- ctx.Err()
		case <-time.After(20 * time.Second):
			cancelled <- nil
		}
		return nil, ctx.Err()
	}})
	done := make(chan error, 1)
	go func() { _, err := callRaw(t, c, "ask_then_cancel"); done <- err }()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the client was never asked")
	}
	// The raw upstream cancels its request when roots change.
	if err := c.Notify(context.Background(), "notifications/roots/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	if err := <-cancelled; err == nil {
		t.Fatal("the client's handler was not cancelled")
	}
	if _, err := callRaw(t, c, "release"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("ask_then_cancel: %v", err)
	}
}

// TestSSEClientHearsURLElicitationComplete: the completion notice of a
// URL-mode elicitation reaches the SSE client that was asked.
func TestSSEClientHearsURLElicitationComplete(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	completed := make(chan string, 1)
	c := sseFrontClient(t, p, `{"elicitation":{"form":{},"url":{}}}`, frontHandlers{
		request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"action":"accept"}`), nil
		},
		notify: func(method string, params json.RawMessage) {
			if method == "notifications/elicitation/complete" {
				completed <- string(params)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Call(ctx, "tools/call", map[string]any{"name": "ask_elicitation", "arguments": map[string]any{"mode": "url"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-completed:
		if !strings.Contains(got, `"elicitationId":"el-1"`) {
			t.Errorf("completion %s", got)
		}
	case <-ctx.Done():
		t.Fatal("notifications/elicitation/complete never reached the SSE client")
	}
}
