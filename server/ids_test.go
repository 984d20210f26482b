package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// exactID says which ids go-sdk writes back byte for byte: the others
// are replaced on the way in.
func TestExactID(t *testing.T) {
	for _, tc := range []struct {
		id    string
		exact bool
	}{
		{`1`, true},
		{`-7`, true},
		{`0`, true},
		{`9007199254740992`, true},
		{`"a"`, true},
		{`""`, true},
		{`"<&>"`, true}, // go-sdk does not escape HTML
		{`"é"`, true},
		{`1.5`, false},
		{`1.0`, false},
		{`1e2`, false},
		{`-0`, false},
		{`9007199254740993`, false},
		{`12345678901234567890123`, false},
		{`"\u0041"`, false},
		{`"\/"`, false},
		{`"scratchpad-mcp/id:1"`, false}, // the internal form: never passed as is
		{`null`, false},
		{`true`, false},
		{``, false},
	} {
		if got := exactID(json.RawMessage(tc.id)); got != tc.exact {
			t.Errorf("exactID(%s) = %v, want %v", tc.id, got, tc.exact)
		}
	}
}

// messageID reads the top-level id member as go-sdk's decoder does.
func TestMessageID(t *testing.T) {
	for _, tc := range []struct{ msg, id string }{
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `1.5`},
		{`{"jsonrpc":"2.0", "id" : "x" ,"method":"ping"}`, `"x"`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `null`},
		{`{"jsonrpc":"2.0","method":"ping","params":{"id":3}}`, ``}, // nested: not the message's
		{`{"jsonrpc":"2.0","ID":3,"method":"ping"}`, ``},            // keys match exactly
		{`{"id":1,"jsonrpc":"2.0","id":2,"method":"ping"}`, `2`},    // the last one wins
		{`{"jsonrpc":"2.0","\u0069d":4,"method":"ping"}`, `4`},      // keys are unescaped
		{`{"a":"}\"{","b":[{"id":1},"]"],"id":-2.5e3 }`, `-2.5e3`},  // strings and nesting skipped
		{`{"id":{"x":[1,2]},"jsonrpc":"2.0"}`, `{"x":[1,2]}`},
		{`[1]`, ``},
	} {
		if got := string(messageID([]byte(tc.msg))); got != tc.id {
			t.Errorf("messageID(%s) = %q, want %q", tc.msg, got, tc.id)
		}
	}
}

func decoded(t *testing.T, line string) inMsg {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return inMsg{m, messageID([]byte(line))}
}

// A connection's ids: admitted, replaced when go-sdk would rewrite them,
// refused when null or in flight, free again once answered.
func TestCallIDs(t *testing.T) {
	type step struct {
		in      string // a message from the client, or "answer <id>" for go-sdk's response
		want    string // what go-sdk sees ("" when dropped), or the id the answer is written under
		wantErr error
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"exact ids pass as they are", []step{
			{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil},
			{`answer 1`, `1`, nil},
		}},
		{"a fraction is replaced and answered as sent", []step{
			{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}`, nil},
			{`answer "scratchpad-mcp/id:1"`, `1.5`, nil},
		}},
		{"1 and 1.0 are two requests", []step{
			{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil},
			{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}`, nil},
		}},
		{"a client id of the internal form is replaced too", []step{
			{`{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}`, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}`, nil},
			{`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:2","method":"ping"}`, nil},
			{`answer "scratchpad-mcp/id:2"`, `2.5`, nil},
			{`answer "scratchpad-mcp/id:1"`, `"scratchpad-mcp/id:1"`, nil},
		}},
		{"null is refused", []step{
			{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, ``, errNullID},
		}},
		{"a notification with a null id passes as one", []step{
			{`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		}},
		{"a duplicate in flight is refused, and free once answered", []step{
			{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, `{"jsonrpc":"2.0","id":"a","method":"ping"}`, nil},
			{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, ``, errDuplicateID},
			{`answer "a"`, `"a"`, nil},
			{`{"jsonrpc":"2.0","id":"a","method":"ping"}`, `{"jsonrpc":"2.0","id":"a","method":"ping"}`, nil},
		}},
		{"a cancellation names go-sdk's id", []step{
			{`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`, `{"jsonrpc":"2.0","id":"scratchpad-mcp/id:1","method":"ping"}`, nil},
			{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1e2,"reason":"x"}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x","requestId":"scratchpad-mcp/id:1"}}`, nil},
		}},
		{"a cancellation go-sdk would misread is dropped", []step{
			{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil},
			{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}`, ``, nil},
			{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, nil},
		}},
		{"the initialize is never cancelled", []step{
			{`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, nil},
			{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`, ``, nil},
		}},
		{"responses and notifications pass", []step{
			{`{"jsonrpc":"2.0","id":3,"result":{}}`, `{"jsonrpc":"2.0","id":3,"result":{}}`, nil},
			{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ids callIDs
			for i, s := range tc.steps {
				if id, ok := strings.CutPrefix(s.in, "answer "); ok {
					var v any
					_ = json.Unmarshal([]byte(id), &v)
					jid, _ := jsonrpc.MakeID(v)
					data, err := encodeResponse(&jsonrpc.Response{ID: jid, Result: json.RawMessage(`{}`)}, func() json.RawMessage { r, _ := ids.answered(jid); return r }())
					if err != nil {
						t.Fatal(err)
					}
					if want := `{"jsonrpc":"2.0","id":` + s.want + `,"result":{}}`; string(data) != want {
						t.Errorf("step %d: answered %s, want %s", i, data, want)
					}
					continue
				}
				ps, err := ids.inbound([]inMsg{decoded(t, s.in)}, nil)
				if !errors.Is(err, s.wantErr) {
					t.Fatalf("step %d: error %v, want %v", i, err, s.wantErr)
				}
				got := ""
				if len(ps) > 0 {
					b, _ := jsonrpc.EncodeMessage(ps[0].msg)
					got = string(b)
				}
				if got != s.want {
					t.Errorf("step %d: go-sdk sees %s, want %s", i, got, s.want)
				}
			}
		})
	}
}

// A batch is admitted whole or not at all, and answered as one array.
func TestCallIDsBatch(t *testing.T) {
	var ids callIDs
	bad := []inMsg{decoded(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), decoded(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)}
	if _, err := ids.inbound(bad, &batchReply{}); !errors.Is(err, errDuplicateID) {
		t.Fatalf("a batch with one id twice: %v", err)
	}
	b := &batchReply{}
	ps, err := ids.inbound([]inMsg{decoded(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), decoded(t, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), decoded(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)}, b)
	if err != nil || len(ps) != 3 {
		t.Fatalf("after the refused batch, id 1 was not free: %v", err)
	}
	var whole []byte
	for _, p := range ps[:2] {
		req := p.msg.(*jsonrpc.Request)
		sent, batch := ids.answered(req.ID)
		data, err := encodeResponse(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}, sent)
		if err != nil || batch != b {
			t.Fatalf("answer of %v: %v, batch %p", req.ID.Raw(), err, batch)
		}
		whole = batch.add(data)
	}
	if want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":1.5,"result":{}}]`; string(whole) != want {
		t.Errorf("batch answered %s, want %s", whole, want)
	}
}

// The refusal's answer is JSON-RPC's Invalid Request under the id as
// sent (null for a null id).
func TestIDErrorResponse(t *testing.T) {
	for _, tc := range []struct {
		err  *idError
		want string
	}{
		{&idError{errNullID, json.RawMessage(`null`)}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a request id must be a string or an integer, not null"}}`},
		{&idError{errDuplicateID, json.RawMessage(`1.50`)}, `{"jsonrpc":"2.0","id":1.50,"error":{"code":-32600,"message":"Invalid Request: duplicate in-flight request id: 1.50"}}`},
	} {
		if got := string(tc.err.response()); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}
