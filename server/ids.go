package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// A client's request ids, answered exactly as sent. go-sdk decodes an id
// into a float64 and keeps it as an int64 or a string, so it answers
// 1.5 as 1, 2^53+1 as 2^53, 1e2 as 100 and "\u0041" as "A"; it takes
// `"id": null` for a notification (no answer), and over stdio drops a
// request whose id is that of one still unanswered. So every transport
// (stdio.go, streamable.go, sse.go) passes a client's messages through
// one [callIDs] of its connection on the way in, and every response
// through it on the way out:
//
//   - a request whose id go-sdk would not write back byte for byte gets
//     an internal id (internalIDPrefix and a counter) and its response
//     the id as sent;
//   - a request with a null id, or the id of an unanswered request of
//     the same connection (by its text), is refused as an Invalid Request
//     (a notification sent with a null id passes as the notification it
//     is);
//   - a notifications/cancelled names the request by the id go-sdk
//     knows; one naming a request go-sdk cannot name (not in flight, and
//     not an id it would read as sent) is dropped, not let cancel
//     another whose id go-sdk reads the same;
//   - a notifications/cancelled naming the initialize in flight is
//     dropped: MCP says clients must not cancel it, and go-sdk answers a
//     request cancelled before its handler starts without running it
//     (internal/jsonrpc2/conn.go, handleAsync), which for initialize left
//     the session uninitialized for good: the initialized notification
//     logged "initialized before initialize" (mcp/server.go, initialized)
//     and every call after it was refused "invalid during session
//     initialization" (mcp/server.go, handle). A client whose first-run
//     initialize outlasts its timeout cancels it, then carries on.

// errNullID: a request (it has a method) with a null id. MCP requires a
// string or an integer; JSON-RPC answers it Invalid Request, id null.
var errNullID = errors.New("a request id must be a string or an integer, not null")

// errDuplicateID: a request with the id of an unanswered request of the
// same connection, answered Invalid Request under that id.
var errDuplicateID = errors.New("duplicate in-flight request id")

// internalIDPrefix starts the ids go-sdk sees in place of ids it would
// not write back as sent. A client's string id with this prefix is
// replaced too, so an internal id never equals a client's.
const internalIDPrefix = "scratchpad-mcp/id:"

// idError is a refused request: why, and its id as sent.
type idError struct {
	err error
	id  json.RawMessage
}

func (e *idError) Error() string {
	if errors.Is(e.err, errNullID) {
		return e.err.Error()
	}
	return fmt.Sprintf("%v: %s", e.err, e.id)
}
func (e *idError) Unwrap() error { return e.err }

// response is the Invalid Request answer to the refused request, one
// JSON text without a newline.
func (e *idError) response() []byte {
	id := e.id
	if errors.Is(e.err, errNullID) {
		id = json.RawMessage("null")
	}
	return errorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + e.Error()})
}

// errorResponse is an error response under id as sent (nil: null); e
// is a *jsonrpc.Error or a *wire.Error, which encode alike.
func errorResponse(id json.RawMessage, e any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, e})
	return b
}

// inMsg is a client's message as go-sdk decoded it, with its id as sent
// (nil when it has no id member).
type inMsg struct {
	msg jsonrpc.Message
	id  json.RawMessage
}

// passed is a message to hand go-sdk; changed when its id (or the id a
// cancellation names) was replaced, so it must be encoded again.
type passed struct {
	msg     jsonrpc.Message
	changed bool
}

// callIDs is one connection's unanswered client requests.
type callIDs struct {
	mu      sync.Mutex
	idle    []chan struct{} // closed when no request is unanswered ([callIDs.waitIdle])
	next    int64
	byRaw   map[string]*call1            // by the id's text as sent
	byID    map[jsonrpc.ID]*call1        // by the id go-sdk knows
	byExtra map[*mcp.RequestExtra]*call1 // by the extra go-sdk hands its handler ([callIDs.read])
}

// call1 is one unanswered client request.
type call1 struct {
	method   string
	raw      json.RawMessage
	id       jsonrpc.ID
	remapped bool
	batch    *batchReply       // stdio: the batch it came in
	extra    *mcp.RequestExtra // what its handler's request carries; nil until go-sdk reads it
}

// inbound admits a client's messages (one, or a batch: all or none) and
// returns what to hand go-sdk. batch, when not nil, is the batch the
// requests answer into (stdio).
func (t *callIDs) inbound(in []inMsg, batch *batchReply) ([]passed, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	for _, m := range in {
		if req, ok := m.msg.(*jsonrpc.Request); !ok || m.id == nil || nullNotification(req, m.id) {
			continue
		}
		if string(m.id) == "null" {
			return nil, &idError{errNullID, m.id}
		}
		if t.byRaw[string(m.id)] != nil || seen[string(m.id)] {
			return nil, &idError{errDuplicateID, m.id}
		}
		seen[string(m.id)] = true
	}
	if t.byRaw == nil {
		t.byRaw, t.byID = map[string]*call1{}, map[jsonrpc.ID]*call1{}
	}
	out := make([]passed, 0, len(in))
	for _, m := range in {
		req, ok := m.msg.(*jsonrpc.Request)
		switch {
		case ok && m.id != nil && !nullNotification(req, m.id):
			c := &call1{method: req.Method, raw: m.id, id: req.ID, batch: batch}
			if !exactID(m.id) {
				t.next++
				c.id, _ = jsonrpc.MakeID(internalIDPrefix + strconv.FormatInt(t.next, 10)) // a string: no error
				c.remapped, req.ID = true, c.id
			}
			t.byRaw[string(m.id)], t.byID[c.id] = c, c
			if batch != nil {
				batch.mu.Lock()
				batch.pending++
				batch.mu.Unlock()
			}
			out = append(out, passed{req, c.remapped})
		case ok && req.Method == "notifications/cancelled":
			p, keep := t.cancelled(req)
			if keep {
				out = append(out, p)
			}
		default:
			out = append(out, passed{m.msg, false})
		}
	}
	return out, nil
}

// nullNotification: a notification (MCP's are all "notifications/…")
// sent with "id": null, which go-sdk has always taken for one; refusing
// it would leave a lenient client's session uninitialized.
func nullNotification(req *jsonrpc.Request, id json.RawMessage) bool {
	return string(id) == "null" && strings.HasPrefix(req.Method, "notifications/")
}

// cancelled makes a cancellation name its request by go-sdk's id, or
// says to drop it. The caller holds t.mu.
func (t *callIDs) cancelled(req *jsonrpc.Request) (passed, bool) {
	var params map[string]json.RawMessage
	if json.Unmarshal(req.Params, &params) != nil {
		return passed{req, false}, true // go-sdk refuses it as it would
	}
	raw, ok := params["requestId"]
	if !ok {
		return passed{req, false}, true
	}
	c := t.byRaw[string(raw)]
	switch {
	case c == nil && exactID(raw):
		return passed{req, false}, true // not in flight: go-sdk ignores it
	case c == nil || c.method == "initialize":
		return passed{}, false
	case !c.remapped:
		return passed{req, false}, true
	}
	id, _ := json.Marshal(c.id.Raw())
	params["requestId"] = id
	b, err := json.Marshal(params)
	if err != nil {
		return passed{}, false
	}
	r := *req
	r.Params = b
	return passed{&r, true}, true
}

// answered forgets the request go-sdk answers under id and returns its
// id as sent when it differs from id (nil: write id as it is), and the
// batch it answers into.
func (t *callIDs) answered(id jsonrpc.ID) (json.RawMessage, *batchReply) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byID[id]
	if c == nil {
		return nil, nil
	}
	delete(t.byID, id)
	delete(t.byRaw, string(c.raw))
	if c.extra != nil {
		delete(t.byExtra, c.extra)
	}
	if len(t.byRaw) == 0 {
		for _, ch := range t.idle {
			close(ch)
		}
		t.idle = nil
	}
	if !c.remapped {
		return nil, c.batch
	}
	return c.raw, c.batch
}

// waitIdle returns once every request admitted so far is answered, or
// ctx ends.
func (t *callIDs) waitIdle(ctx context.Context) {
	t.mu.Lock()
	if len(t.byRaw) == 0 {
		t.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	t.idle = append(t.idle, ch)
	t.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// read is told of each message go-sdk reads from the connection (its
// Read): a request it will answer gets a [mcp.RequestExtra] when the
// transport gave it none (stdio, SSE), so that its handler's request
// names it ([callIDs.sent]). go-sdk keeps the id it answers under in its
// handler's context only, under a key of its own.
func (t *callIDs) read(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	extra, _ := req.Extra.(*mcp.RequestExtra)
	if extra == nil {
		extra = &mcp.RequestExtra{}
		req.Extra = extra
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.byID[req.ID]
	if c == nil {
		return
	}
	if t.byExtra == nil {
		t.byExtra = map[*mcp.RequestExtra]*call1{}
	}
	c.extra, t.byExtra[extra] = extra, c
}

// sent is the id, as the client sent it, of the unanswered request whose
// handler got extra; nil when there is none.
func (t *callIDs) sent(extra *mcp.RequestExtra) json.RawMessage {
	if t == nil || extra == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.byExtra[extra]; c != nil {
		return c.raw
	}
	return nil
}

// idText is a request id as the span attribute jsonrpc.request.id
// names it: a string id's text, a number as sent.
func idText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// forget drops requests that were admitted but never reached go-sdk.
func (t *callIDs) forget(msgs []jsonrpc.Message) {
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			t.answered(req.ID)
		}
	}
}

// exactID reports whether go-sdk writes back the id raw byte for byte:
// an integer within float64's exact range in its plain form, or a string
// in encoding/json's form (and not of the internal form).
func exactID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil || strings.HasPrefix(s, internalIDPrefix) {
			return false
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // as go-sdk encodes
		if enc.Encode(s) != nil {
			return false
		}
		return bytes.Equal(bytes.TrimSuffix(b.Bytes(), []byte("\n")), raw)
	case c == '-' || c >= '0' && c <= '9':
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return false
		}
		return strconv.FormatInt(int64(f), 10) == string(raw)
	}
	return false
}

// messageID is the raw value of msg's top-level "id" member (nil when
// there is none), the key matched exactly after unescaping and the last
// one winning: how go-sdk's decoder reads it. msg is valid JSON (the
// caller decoded it); [jsonscan.Lookup] reads it in one pass without
// allocating: a request may carry megabytes of arguments.
func messageID(msg []byte) json.RawMessage {
	id, ok := jsonscan.Lookup(msg, "id")
	if !ok {
		return nil
	}
	return id
}

// coded is msg with its error, if it is a response with one, always
// holding a JSON-RPC code: go-sdk sends any error that is not a
// *jsonrpc.Error with code 0 (jsonrpc2's toWireError) — a request its
// client cancelled before or while it ran, one ended with its session —
// which no client reads as an error kind; such an error is -32603 saying
// why. Every transport's Write passes its responses through it.
func coded(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	if je, ok := errors.AsType[*jsonrpc.Error](resp.Error); ok && je.Code != 0 {
		return msg
	}
	return &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}}
}

// encodeResponse is resp as sent: go-sdk's encoding ([coded]), with id
// as sent when it is not nil.
func encodeResponse(resp *jsonrpc.Response, id json.RawMessage) ([]byte, error) {
	resp = coded(resp).(*jsonrpc.Response)
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil || id == nil {
		return data, err
	}
	return withID(data, resp.ID, id)
}

// responseHead starts every encoded response.
const responseHead = `{"jsonrpc":"2.0","id":`

// withID replaces the internal id of an encoded response (which starts
// with it, see jsonrpc.EncodeMessage) by raw.
func withID(data []byte, internal jsonrpc.ID, raw json.RawMessage) ([]byte, error) {
	in, err := json.Marshal(internal.Raw())
	if err != nil {
		return nil, err
	}
	head := responseHead + string(in)
	if !bytes.HasPrefix(data, []byte(head)) {
		return nil, fmt.Errorf("response to %s: unexpected encoding %.40q", raw, data)
	}
	out := make([]byte, 0, len(data)-len(head)+len(responseHead)+len(raw))
	out = append(append(append(out, responseHead...), raw...), data[len(head):]...)
	return out, nil
}

// batchReply collects the responses to one stdio batch line, written as
// one array once the last is in (JSON-RPC 2.0 batches).
type batchReply struct {
	mu      sync.Mutex
	pending int
	parts   [][]byte
}

// add records one response and returns the batch's answer once it is
// complete (nil before).
func (b *batchReply) add(resp []byte) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parts = append(b.parts, resp)
	if b.pending--; b.pending > 0 {
		return nil
	}
	out := append([]byte{'['}, bytes.Join(b.parts, []byte{','})...)
	return append(out, ']')
}
