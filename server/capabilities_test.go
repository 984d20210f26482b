package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// initCaps returns the capabilities e's initialize answer declares.
func initCaps(t *testing.T, e *env, front string) json.RawMessage {
	t.Helper()
	var init struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(rawConnect(t, e, front, `{}`).init, &init); err != nil {
		t.Fatal(err)
	}
	return init.Capabilities
}

// TestCapabilitiesAreTheUnion: initialize declares the server's own
// capabilities plus the union of its upstreams', learned by waiting for
// upstreams that are still connecting.
func TestCapabilitiesAreTheUnion(t *testing.T) {
	missing := config.Server{Name: "missing", Transport: config.TransportStdio, Cmd: []string{"/nonexistent/upstream"},
		Timeout: time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 10 * time.Millisecond}
	all := `{"logging":{},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true},"completions":{}}`
	for _, tc := range []struct {
		name    string
		servers []config.Server
		want    string
	}{
		{"none", nil, `{"tools":{"listChanged":true}}`},
		// The raw upstream offers tools, resources (no subscribe) and
		// prompts; no logging, no completions.
		{"raw", []config.Server{rawUpstream("raw")},
			`{"prompts":{"listChanged":true},"resources":{"listChanged":true},"tools":{"listChanged":true}}`},
		{"testupstream", []config.Server{stdioUpstream("up", nil)}, all},
		{"raw and testupstream", []config.Server{rawUpstream("raw"), stdioUpstream("up", nil)}, all},
		// Never connected: unknown, so everything is declared.
		{"unknown", []config.Server{rawUpstream("raw"), missing}, all},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnv(t, tc.servers...)
			for _, front := range fronts {
				if got := initCaps(t, e, front); !sameJSON(t, got, []byte(tc.want)) {
					t.Errorf("%s: capabilities\ngot  %s\nwant %s", front, got, tc.want)
				}
			}
		})
	}
}

// TestOwnResourcesAndPromptsAreDeclared: the server's own resources (the
// pad, subscribable) and prompts are declared with no upstream offering
// any.
func TestOwnResourcesAndPromptsAreDeclared(t *testing.T) {
	own := &server.Own{
		Resources: []tool.Resource{{URI: "own://pad", Name: "pad", Read: func(context.Context) (string, error) { return "pad", nil }}},
		Prompts:   []tool.Prompt{{Name: "own", Get: func(context.Context) (string, string, error) { return "", "own", nil }}},
	}
	e := startEnvWith(t, envOptions{own: own}, rawUpstream("raw"))
	want := `{"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"tools":{"listChanged":true}}`
	if got := initCaps(t, e, "http"); !sameJSON(t, got, []byte(want)) {
		t.Errorf("capabilities\ngot  %s\nwant %s", got, want)
	}
}

// TestUpstreamSeesTheClientsCapabilities: with one client (stdio,
// StartUpstreams) an upstream is told exactly the sampling, elicitation
// and roots capabilities the client declared; otherwise all three.
func TestUpstreamSeesTheClientsCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name    string
		mirror  bool
		declare []string
		want    string
	}{
		{"mirrored, sampling only", true, []string{"sampling"}, `{"sampling":{}}`},
		{"mirrored, nothing", true, nil, `{}`},
		{"mirrored, form elicitation and roots", true, []string{"elicitation", "roots"}, `{"elicitation":{"form":{}},"roots":{"listChanged":true}}`},
		{"mirrored, everything", true, fullClient, `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
		{"several clients", false, []string{"sampling"}, `{"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true},"sampling":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startEnvWith(t, envOptions{mirror: tc.mirror}, stdioUpstream("up", nil))
			c := connect(t, e, "stdio", nil, tc.declare...)
			got := text(call(t, c, "client_caps", nil))
			var a map[string]any
			if err := json.Unmarshal([]byte(got), &a); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			// Only what the proxy forwards is compared.
			for k := range a {
				if k != "sampling" && k != "elicitation" && k != "roots" {
					delete(a, k)
				}
			}
			if b, _ := json.Marshal(a); !sameJSON(t, b, []byte(tc.want)) {
				t.Errorf("upstream saw %s, want %s", got, tc.want)
			}
		})
	}
}
