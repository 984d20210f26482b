package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// TestForwardToModernUpstream: with go-sdk v1.8.0's everything-server as a
// 2026-07-28 stdio upstream, a forwarded call declares the calling
// session's capabilities (the server decides -32021 on them), and an
// input-required answer comes back as *upstream.InputRequired, not as a
// tool error.
func TestForwardToModernUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds go-sdk's everything-server")
	}
	bin, err := testupstream.EverythingServer()
	if err != nil {
		t.Fatal(err)
	}
	p := New(Options{Logger: quiet(), Servers: []config.Server{{Name: "ev", Transport: config.TransportStdio, Cmd: []string{bin},
		Protocol: config.ProtocolAuto, Timeout: 20 * time.Second}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p.Start(ctx, nil)
	defer p.Close()
	p.AwaitStarted(ctx, 20*time.Second)
	if pr := p.Upstreams()[0].Protocol(); pr.Version != "2026-07-28" {
		t.Fatalf("protocol %s", pr)
	}
	p.Refresh(ctx) // a 2026 upstream's listings, fresh or re-listed: returns

	none := &capsSession{fakeSession: fakeSession{id: "none"}}
	_, err = p.CallTool(ctx, &Request{Session: none, Agent: &divert.Agent{}}, "test_missing_capability", nil)
	if rerr, ok := errors.AsType[*upstream.RPCError](err); !ok || rerr.Code != -32021 {
		t.Errorf("without sampling: %v, want -32021", err)
	}
	sampling := &capsSession{fakeSession: fakeSession{id: "sampling"}, caps: ClientCapabilities{Sampling: true, Raw: json.RawMessage(`{"sampling":{}}`)}}
	if res, err := p.CallTool(ctx, &Request{Session: sampling, Agent: &divert.Agent{}}, "test_missing_capability", nil); err != nil || strings.Contains(string(res), `"isError":true`) {
		t.Errorf("with the session's sampling: %s %v", res, err)
	}
	// A client that answers input-required results itself (2026-07-28)
	// gets the upstream's, unchanged.
	elicit := &answererSession{capsSession{fakeSession: fakeSession{id: "elicit"}, caps: ClientCapabilities{Elicitation: true, Raw: json.RawMessage(`{"elicitation":{"form":{}}}`)}}}
	res, err := p.CallTool(ctx, &Request{Session: elicit, Agent: &divert.Agent{}}, "test_input_required_result_elicitation", json.RawMessage(`{}`))
	if ir, ok := errors.AsType[*upstream.InputRequired](err); !ok || res != nil || ir.Requests["user_name"] == nil {
		t.Errorf("input required: %s %v, want *upstream.InputRequired", res, err)
	}
	if len(elicit.asked) != 0 {
		t.Errorf("a client that answers input-required results was asked %v", elicit.asked)
	}
}

// answererSession is a session that answers input-required results
// itself ([InputAnswerer]).
type answererSession struct{ capsSession }

func (*answererSession) AnswersInputRequired() bool { return true }
