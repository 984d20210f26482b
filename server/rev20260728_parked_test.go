package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// TestModernBridgesAsks: a 2025 upstream that asks its client mid-call
// (elicitation) is answered by a 2026-07-28 client through an
// input-required answer and a retry: the call goes on where it waited,
// and its state continues it once.
func TestModernBridgesAsks(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	ctx := context.Background()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	first := post(t, ctx, e.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_elicitation",`+meta+`}}`, modernHeaders("tools/call", "ask_elicitation")...)
	var ir struct {
		ResultType    string
		InputRequests map[string]struct {
			Method string
			Params json.RawMessage
		}
		RequestState string
	}
	if err := json.Unmarshal(first.last(t)["result"], &ir); err != nil || ir.ResultType != wire.ResultInputRequired || ir.RequestState == "" {
		t.Fatalf("first answer: HTTP %d %s", first.status, first.body)
	}
	q, ok := ir.InputRequests["elicit-1"]
	if !ok || q.Method != "elicitation/create" || !strings.Contains(string(q.Params), "your name?") {
		t.Fatalf("input requests %+v", ir.InputRequests)
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_elicitation","inputResponses":{"elicit-1":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + strconvQuote(ir.RequestState) + `,` + meta + `}}`
	done := post(t, ctx, e.url, retry, modernHeaders("tools/call", "ask_elicitation")...)
	res := done.last(t)["result"]
	if !strings.Contains(string(res), `"resultType":"complete"`) || !strings.Contains(string(res), "Ada") {
		t.Fatalf("after the answer: HTTP %d %s", done.status, done.body)
	}
	// The state continued its call; it continues nothing again.
	again := post(t, ctx, e.url, strings.Replace(retry, `"id":2`, `"id":3`, 1), modernHeaders("tools/call", "ask_elicitation")...)
	var werr wire.Error
	_ = json.Unmarshal(again.last(t)["error"], &werr)
	if again.status != 400 || werr.Code != wire.CodeInvalidParams || !strings.Contains(werr.Message, "is over") {
		t.Errorf("replayed state: HTTP %d %s", again.status, again.body)
	}
	// Tampered: refused before anything runs.
	bad := post(t, ctx, e.url, strings.Replace(retry, ir.RequestState, ir.RequestState+"-TAMPERED", 1), modernHeaders("tools/call", "ask_elicitation")...)
	if bad.status != 400 || !strings.Contains(string(bad.body), "invalid requestState") {
		t.Errorf("tampered state: HTTP %d %s", bad.status, bad.body)
	}
	// A request that does not take elicitation is not asked.
	plain := post(t, ctx, e.url, modernBody(4, "tools/call", `"name":"ask_elicitation"`), modernHeaders("tools/call", "ask_elicitation")...)
	if strings.Contains(string(plain.body), wire.ResultInputRequired) {
		t.Errorf("asked a client that declared no elicitation: %s", plain.body)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }
