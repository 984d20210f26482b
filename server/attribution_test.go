package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// An upstream's sampling request goes to the session whose call it
// serves, never a guess (issue 26): over streamable HTTP the request comes
// on that call's own stream and is routed exactly, even with another
// session's call in flight on the same upstream; over stdio nothing says
// which call it serves, so with two sessions' calls in flight it is
// refused.
func TestServerRequestAttribution(t *testing.T) {
	for _, tc := range []struct {
		kind    string
		refused bool
	}{
		{"http", false},
		{"stdio", true},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			up := stdioUpstream("up", nil)
			if tc.kind == "http" {
				up = remoteUpstream(t, "up", config.TransportHTTPStreamable)
			}
			e := startEnv(t, up)
			busy, asker := &recorder{}, &recorder{}
			c1 := connect(t, e, "http", busy, "sampling")
			c2 := connect(t, e, "http", asker, "sampling")
			waitTool(t, c1, "ask_sampling")
			waitTool(t, c2, "ask_sampling")
			// c2's call asks for sampling only once c1's call, made
			// later, is in flight: the most recent call is not its own.
			// c2's call has reached the upstream once its progress 0
			// came back.
			asked := make(chan *mcp.CallToolResult, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "ask_sampling", Arguments: map[string]any{"delay_ms": 2000}}
				p.SetProgressToken("asker")
				res, err := c2.CallTool(context.Background(), p)
				if err != nil {
					t.Error(err)
				}
				asked <- res
			}()
			asker.waitNotes(t, "notifications/progress", 1)
			call(t, c1, "slow", map[string]any{"steps": 3, "ms": 1500})
			res := <-asked
			if n := len(busy.askedAll()); n != 0 {
				t.Fatalf("the busy session was asked %d times: another session's request reached it", n)
			}
			if tc.refused {
				if !res.IsError && !strings.Contains(text(res), "rather than guess") {
					t.Fatalf("want a refusal, got %q", text(res))
				}
				return
			}
			if res.IsError || len(asker.askedAll()) != 1 || !strings.Contains(text(res), `"model":"test-model"`) {
				t.Fatalf("asker: %d requests, result %q", len(asker.askedAll()), text(res))
			}
		})
	}
}

// Over stdio a request naming the progress token of the call it serves
// goes to that call's session, even with another session's call in
// flight on the upstream.
func TestServerRequestAttributedByProgressToken(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	busy, asker := &recorder{}, &recorder{}
	c1 := connect(t, e, "http", busy, "sampling")
	c2 := connect(t, e, "http", asker, "sampling")
	waitTool(t, c2, "ask_sampling")
	asked := make(chan *mcp.CallToolResult, 1)
	go func() {
		p := &mcp.CallToolParams{Name: "ask_sampling", Arguments: map[string]any{"delay_ms": 2000, "meta": "progress"}}
		p.SetProgressToken("mine")
		res, err := c2.CallTool(context.Background(), p)
		if err != nil {
			t.Error(err)
		}
		asked <- res
	}()
	asker.waitNotes(t, "notifications/progress", 1) // c2's call reached the upstream
	call(t, c1, "slow", map[string]any{"steps": 3, "ms": 1500})
	res := <-asked
	if res == nil || res.IsError || len(asker.askedAll()) != 1 || len(busy.askedAll()) != 0 {
		t.Fatalf("asker asked %d, busy asked %d: %v", len(asker.askedAll()), len(busy.askedAll()), res)
	}
}
