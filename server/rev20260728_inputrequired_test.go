package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// TestSealedRequestState: the state handed to a 2026-07-28 client for an
// upstream's input-required result opens only for the same caller, method,
// name and arguments, unaltered and in time; then the upstream gets back
// its own state and the answers to what it asked, nothing else.
func TestSealedRequestState(t *testing.T) {
	s := New(Options{Session: func(SessionInfo) (*Own, error) { return &Own{}, nil }})
	ag := &agent20260728{key: "m/alice|main|worker||0", owner: "alice", own: &Own{}}
	req := func(ag *agent20260728, params string) *request20260728 {
		return &request20260728{method: "tools/call", params: json.RawMessage(params), ag: ag}
	}
	ir := &upstream.InputRequired{Requests: map[string]json.RawMessage{"confirm": json.RawMessage(`{"method":"elicitation/create","params":{"message":"sure?"}}`)}, State: "upstream-state"}
	raw, ok, err := s.inputRequired(req(ag, `{}`), "delete", json.RawMessage(`{"path":"/x"}`), ir)
	if !ok || err != nil {
		t.Fatalf("inputRequired: %v %v", ok, err)
	}
	got, err := wire.ParseInputRequired(raw)
	if err != nil || got.State == "" || got.State == "upstream-state" || got.Requests["confirm"] == nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	retry := func(state, args string) string {
		return `{"name":"delete","arguments":` + args + `,"inputResponses":{"confirm":{"action":"accept"},"extra":{"x":1}},"requestState":` + strconvQuote(state) + `}`
	}
	c, err := s.continuing(req(ag, retry(got.State, `{"path":"/x"}`)), "delete", json.RawMessage(`{"path":"/x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || c.State != "upstream-state" || c.Responses["confirm"] == nil || c.Responses["extra"] != nil {
		t.Errorf("continuation %+v", c)
	}
	other := &agent20260728{key: "m/bob|main|worker||0", owner: "bob", own: &Own{}}
	otherAgent := &agent20260728{key: "m/alice|scout|worker||0", owner: "alice", own: &Own{}}
	for _, tc := range []struct {
		name  string
		ag    *agent20260728
		state string
		args  string
		tool  string
		why   error
	}{
		{"tampered", ag, got.State + "-TAMPERED", `{"path":"/x"}`, "delete", wire.ErrStateSignature},
		{"one byte changed", ag, got.State[:10] + flip(got.State[10]) + got.State[11:], `{"path":"/x"}`, "delete", nil},
		{"another owner", other, got.State, `{"path":"/x"}`, "delete", wire.ErrStateOwner},
		{"another agent", otherAgent, got.State, `{"path":"/x"}`, "delete", wire.ErrStateAgent},
		{"other arguments", ag, got.State, `{"path":"/y"}`, "delete", wire.ErrStateArgs},
		{"another tool", ag, got.State, `{"path":"/x"}`, "rename", wire.ErrStateName},
		{"not ours", ag, "upstream-state", `{"path":"/x"}`, "delete", wire.ErrStateMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.continuing(req(tc.ag, retry(tc.state, tc.args)), tc.tool, json.RawMessage(tc.args))
			var we *wire.Error
			if !errors.As(err, &we) || we.Code != wire.CodeInvalidParams || we.Status != 400 || !strings.Contains(we.Message, "invalid requestState") {
				t.Fatalf("%v, want -32602 invalid requestState", err)
			}
			if tc.why != nil && !strings.Contains(we.Message, tc.why.Error()) {
				t.Errorf("%q, want it to say %q", we.Message, tc.why)
			}
		})
	}
	// Expired: sealed with an expiry past.
	b, _ := binding(req(ag, `{}`), "delete", json.RawMessage(`{"path":"/x"}`))
	old, _ := s.sealer.Seal(wire.StatePayload{StateBinding: b, Expires: time.Now().Add(-time.Second).Unix()})
	if _, err := s.continuing(req(ag, retry(old, `{"path":"/x"}`)), "delete", json.RawMessage(`{"path":"/x"}`)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired state: %v", err)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}
