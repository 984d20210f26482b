package server

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// echoUpstream serves a go-sdk MCP server with an "echo" tool over
// streamable HTTP on addr ("127.0.0.1:0" picks a port) until stop.
func echoUpstream(t *testing.T, addr, tag string) (url string, stop func()) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tag}}}, nil
		})
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old server's port may take a moment to free
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go func() { _ = hs.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", func() { _ = hs.Close() }
}

// connectHTTP is a go-sdk client session on a streamable HTTP endpoint,
// closed with the test.
func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), nil
}

// TestHTTPUpstreamRestartIsInvisible: a streamable-HTTP upstream killed
// and started again on the same port (its sessions gone: 404) answers the
// next call through the proxy, with no client action.
func TestHTTPUpstreamRestartIsInvisible(t *testing.T) {
	url, stop := echoUpstream(t, "127.0.0.1:0", "first")
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	proxyURL := startProxyHTTP(t, config.Server{Name: "up", Transport: config.TransportHTTPStreamable, URL: url,
		Timeout: 20 * time.Second, RestartBackoffMax: 200 * time.Millisecond})

	cs := connectHTTP(t, proxyURL)
	if got, err := callText(t, cs, "echo"); err != nil || got != "first" {
		t.Fatalf("before the restart: %q, %v", got, err)
	}
	stop()
	_, stop2 := echoUpstream(t, addr, "second")
	defer stop2()
	got, err := callText(t, cs, "echo")
	if err != nil || got != "second" {
		t.Fatalf("after the restart: %q, %v", got, err)
	}
}

// TestHTTPUpstreamDownSaysSo: with the upstream gone for good, a call
// answers (within the bound) with an error result naming it, not a hang.
func TestHTTPUpstreamDownSaysSo(t *testing.T) {
	url, stop := echoUpstream(t, "127.0.0.1:0", "first")
	proxyURL := startProxyHTTP(t, config.Server{Name: "docs", Transport: config.TransportHTTPStreamable, URL: url,
		Timeout: 5 * time.Second, RestartBackoffMax: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := connectHTTP(t, proxyURL)
	if _, err := callText(t, cs, "echo"); err != nil {
		t.Fatal(err)
	}
	stop()
	// A hang would end in this context's deadline, far beyond the
	// upstream's 5 s timeout, and fail the call.
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("want a tool error result, got a protocol error: %v", err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, `"docs"`) {
		t.Fatalf("want an error naming the upstream, got isError=%v %q", res.IsError, text)
	}
}
