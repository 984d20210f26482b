package intercept

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// initCaps connects to url and returns the capabilities initialize
// declares, as JSON.
func initCaps(t *testing.T, url string) string {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	res, err := c.Initialize(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Capabilities)
	return string(b)
}

// TestCapabilitiesAreTheUnion: initialize declares the proxy's own
// capabilities plus the union of its upstreams', learned by waiting for
// upstreams that are still connecting.
func TestCapabilitiesAreTheUnion(t *testing.T) {
	missing := config.Server{Name: "missing", Transport: config.TransportStdio, Cmd: []string{"/nonexistent/upstream"},
		Timeout: time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 10 * time.Millisecond}
	for _, tc := range []struct {
		name    string
		servers []config.Server
		want    string
	}{
		{"none", nil,
			`{"tools":{"listChanged":true}}`},
		// The raw upstream offers tools, resources (no subscribe) and
		// prompts; no logging, no completions.
		{"raw", []config.Server{rawUpstream("raw")},
			`{"prompts":{"listChanged":true},"resources":{"listChanged":true},"tools":{"listChanged":true}}`},
		{"mcp-go upstream", []config.Server{stdioUpstream("up", nil)},
			`{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"completions":{}}`},
		{"raw and mcp-go", []config.Server{rawUpstream("raw"), stdioUpstream("up", nil)},
			`{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"completions":{}}`},
		// Never connected: unknown, so everything is declared.
		{"unknown", []config.Server{rawUpstream("raw"), missing},
			`{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"completions":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxy(t, tc.servers...)
			if got := initCaps(t, p.url); got != tc.want {
				t.Errorf("capabilities\ngot  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestOwnResourcesAndPromptsAreDeclared: the proxy's own resources (the
// pad, subscribable) and prompts are declared with no upstream offering
// any.
func TestOwnResourcesAndPromptsAreDeclared(t *testing.T) {
	srv := server.NewMCPServer("p", "1", server.WithToolCapabilities(true), server.WithResourceCapabilities(true, true), server.WithPromptCapabilities(true))
	srv.AddResource(mcp.NewResource("own://pad", "pad"), func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return nil, nil
	})
	srv.AddPrompt(mcp.NewPrompt("own"), func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	r := New(Options{Servers: []config.Server{rawUpstream("raw")}, Logger: quietLogger(), Agent: func(context.Context) (*Agent, error) { return &Agent{}, nil }})
	r.Attach(srv)
	ctx, cancel := context.WithCancel(context.Background())
	r.Start(ctx)
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(func() { ts.Close(); cancel(); r.Close() })
	want := `{"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
	if got := initCaps(t, ts.URL+"/mcp"); got != want {
		t.Errorf("capabilities\ngot  %s\nwant %s", got, want)
	}
}

// TestUpstreamSeesTheClientsCapabilities: with StartOnFirstClient (one
// client, as over stdio) an upstream is told exactly the sampling,
// elicitation and roots capabilities the client declared; otherwise all
// three.
func TestUpstreamSeesTheClientsCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mirror bool
		client mcp.ClientCapabilities
		want   string
	}{
		{"mirrored, sampling only", true, mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, `{"sampling":{}}`},
		{"mirrored, nothing", true, mcp.ClientCapabilities{}, `{}`},
		{"mirrored, form elicitation and roots", true,
			mcp.ClientCapabilities{Roots: &struct {
				ListChanged bool `json:"listChanged,omitempty"`
			}{ListChanged: true}, Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}}},
			`{"elicitation":{"form":{}},"roots":{"listChanged":true}}`},
		{"several clients", false, mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}},
			`{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxyWith(t, Options{StartOnFirstClient: tc.mirror}, stdioUpstream("up", nil))
			c := connectFront(t, p, "stdio", nil, client.WithClientCapabilities(tc.client))
			waitTool(t, c, "client_caps")
			got := text(call(t, c, "client_caps", nil))
			var a, b map[string]any
			_ = json.Unmarshal([]byte(got), &a)
			_ = json.Unmarshal([]byte(tc.want), &b)
			// Only what the proxy forwards is compared.
			for k := range a {
				if k != "sampling" && k != "elicitation" && k != "roots" {
					delete(a, k)
				}
			}
			if ga, _ := json.Marshal(a); string(ga) != mustJSON2(t, b) {
				t.Errorf("upstream saw %s, want %s", got, tc.want)
			}
		})
	}
}
