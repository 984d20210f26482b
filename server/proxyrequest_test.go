package server_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestIdentifiedOncePerRequest: in both eras the identify stage resolves
// who a forwarded request is for exactly once (the proxy used to call its
// own resolvers up to four times a call), counts a tools/call as a call,
// and resolves no one for a completion, whose answer is the host's.
func TestIdentifiedOncePerRequest(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.url, HTTPClient: http.DefaultClient, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				name string
				do   func() error
				want []bool // the Identify calls it makes
			}{
				{"tools/call", func() error {
					_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
					return err
				}, []bool{true}},
				{"resources/read", func() error {
					_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testupstream.TextURI})
					return err
				}, []bool{false}},
				{"prompts/get", func() error {
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: testupstream.PromptName, Arguments: map[string]string{"name": "ada"}})
					return err
				}, []bool{false}},
				{"completion/complete", func() error {
					_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: testupstream.PromptName},
						Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"}})
					return err
				}, nil},
			}
			for _, s := range steps {
				e.mu.Lock()
				e.identified = nil
				e.mu.Unlock()
				if err := s.do(); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				e.mu.Lock()
				got := slices.Clone(e.identified)
				e.mu.Unlock()
				if !slices.Equal(got, s.want) {
					t.Errorf("%s: identified %v, want %v", s.name, got, s.want)
				}
			}
		})
	}
}
