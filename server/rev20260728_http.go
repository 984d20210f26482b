package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// modern serves body when it is a 2026-07-28 request, and reports
// whether it was one (else the 2025 path serves it). The checks run in
// go-sdk v1.8.0's order, so a bad request gets the error go-sdk's
// stateless server gives: a 2026-07-28 request on a 2025 session is
// refused, method unknown (404), protocol version header against _meta,
// Mcp-Method/Mcp-Name/Mcp-Param-* against the body (-32020), the
// envelope (-32602), the version served (-32022), methods the revision
// removed (404), a retry's inputResponses (-32602). Then it runs, its
// call ending when the client closes the response.
func (h *httpHandler) take20260728(w http.ResponseWriter, r *http.Request, body []byte) bool {
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' && inBatch20260728(t) {
		writeJSON(w, batchRefused.HTTPStatus(), errorResponse(nil, batchRefused))
		return true
	}
	if len(t) == 0 || t[0] != '{' {
		return false // not a request of 2026-07-28: the 2025 path answers it
	}
	msg, err := jsonrpc.DecodeMessage(t)
	if err != nil {
		return false // malformed: answered as ever
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	era, werr := wire.Classify(r.Header, req.Params)
	if era == wire.Era2025 && werr == nil {
		return false
	}
	id := messageID(t)
	fail := func(e *wire.Error) { writeJSON(w, e.HTTPStatus(), errorResponse(id, e)) }
	if !req.IsCall() {
		// Over HTTP a closed response stream is the cancellation;
		// nothing else a client may notify is served.
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	if r.Header.Get(wire.HeaderSessionID) != "" {
		fail(&wire.Error{Code: wire.CodeInvalidRequest, Status: http.StatusBadRequest,
			Message: "a 2026-07-28 request takes no Mcp-Session-Id: it belongs to no session (send it without the header, or speak the session's revision)"})
		return true
	}
	if _, known := wire.Method(req.Method); !known {
		fail(wire.MethodNotFound(req.Method))
		return true
	}
	if werr != nil {
		fail(werr)
		return true
	}
	if h.s.refuseDraining(w) {
		return true
	}
	ag, done, err := h.s.agent20260728For(r)
	if err != nil {
		if errors.Is(err, ErrTooManySessions) {
			h.s.log.Warn("request refused", "owner", ownerOf(r), "error", err)
			h.s.opts.Telemetry.Refused(r.Context(), "sessions", ownerOf(r))
			w.Header().Set("Retry-After", "30")
			fail(&wire.Error{Code: wire.CodeInternalError, Message: err.Error(), Status: http.StatusTooManyRequests})
			return true
		}
		h.s.log.Error("making the caller's agent failed", "error", err)
		fail(&wire.Error{Code: wire.CodeInternalError, Message: "making the caller's agent failed: " + err.Error(), Status: http.StatusInternalServerError})
		return true
	}
	defer done()
	if werr := wire.CheckHeaders(r.Header, req.Method, req.Params, toolBindings(ag, req.Method, req.Params)); werr != nil {
		fail(werr)
		return true
	}
	env, werr := check20260728(req.Method, req.Params)
	if werr != nil {
		fail(werr)
		return true
	}
	ex := &exchange{w: w, id: id}
	h.s.serve20260728(r.Context(), &request20260728{id: id, method: req.Method, params: req.Params, env: env, header: r.Header, out: ex, ag: ag})
	return true
}

// batchRefused answers a batch holding a 2026-07-28 request: the
// revision has no batches, and go-sdk must not serve one of its requests.
var batchRefused = &wire.Error{Code: wire.CodeInvalidRequest, Status: http.StatusBadRequest,
	Message: "JSON-RPC batches are not part of MCP 2026-07-28: send one request per message"}

// inBatch20260728 reports whether a batch holds a request carrying the
// 2026-07-28 envelope.
func inBatch20260728(batch []byte) bool {
	var elems []json.RawMessage
	if json.Unmarshal(batch, &elems) != nil {
		return false // malformed: the 2025 path says so
	}
	for _, e := range elems {
		params, _ := jsonscan.Lookup(e, "params")
		if era, _ := wire.Classify(nil, params); era == wire.Era20260728 {
			return true
		}
	}
	return false
}

// check20260728 is the last of a 2026-07-28 request's checks, on both
// transports: its envelope (-32602, -32022), a method the revision
// removed (-32601), a retry's inputResponses (-32602).
func check20260728(method string, params json.RawMessage) (wire.Envelope, *wire.Error) {
	env, werr := wire.ParseEnvelope(params)
	if werr == nil {
		werr = wire.CheckMethod(wire.Era20260728, method)
	}
	if werr == nil {
		if mi, _ := wire.Method(method); mi.MayNeedInput {
			_, werr = wire.ParseRetry(params)
		}
	}
	return env, werr
}

// toolBindings are the x-mcp-header bindings of the tool a tools/call
// names, as listed to the caller; none for anything else (the server's
// own tools bind no headers).
func toolBindings(ag *agent20260728, method string, params json.RawMessage) []wire.Binding {
	if method != "tools/call" {
		return nil
	}
	name, ok := jsonscan.Lookup(params, "name")
	if !ok {
		return nil
	}
	def, ok := ag.px.ToolDefinition(jsonscan.Unquote(name))
	if !ok {
		return nil
	}
	schema, ok := jsonscan.Lookup(def, "inputSchema")
	if !ok {
		return nil
	}
	b, err := wire.ParamBindings(schema)
	if err != nil {
		return nil
	}
	return b
}

// exchange is one 2026-07-28 request's HTTP response: a single JSON
// object when the answer is all there is, an event stream when
// notifications (progress) come first — no event ids, no priming, no
// resumption, as the revision has none. A forwarded result is written as
// the upstream's bytes between a head and a tail, never re-encoded.
type exchange struct {
	w  http.ResponseWriter
	id json.RawMessage

	mu   sync.Mutex
	sse  bool // the event stream has begun
	done bool // answered
}

// errAnswered: a notification after the request's answer.
var errAnswered = errors.New("the request is answered")

func (x *exchange) notify(method string, params json.RawMessage) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return errAnswered
	}
	x.begin()
	msg, err := notification(method, params)
	if err != nil {
		return err
	}
	return writeEvent(x.w, "message", "", msg)
}

// notification is a JSON-RPC notification's bytes.
func notification(method string, params json.RawMessage) ([]byte, error) {
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", method, params})
}

// begin starts the event stream. The caller holds x.mu.
func (x *exchange) begin() {
	if x.sse {
		return
	}
	x.sse = true
	hd := x.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
}

// keepAlive writes an SSE comment, which clients ignore, so that an
// idle listen is not cut by a proxy on the way.
func (x *exchange) keepAlive() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return errAnswered
	}
	x.begin()
	if _, err := x.w.Write([]byte(":\n\n")); err != nil {
		return err
	}
	return http.NewResponseController(x.w).Flush()
}

func (x *exchange) result(raw []byte) error {
	id := x.id
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	head := append(append([]byte(`{"jsonrpc":"2.0","id":`), id...), `,"result":`...)
	return x.answer(http.StatusOK, head, raw, []byte("}"))
}

func (x *exchange) fail(e *wire.Error) error {
	return x.answer(e.HTTPStatus(), errorResponse(x.id, e))
}

// answer writes the response message, in parts: as the event stream's
// last event, or as the JSON body with status.
func (x *exchange) answer(status int, parts ...[]byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done {
		return errAnswered
	}
	x.done = true
	if x.sse {
		return writeEvent(x.w, "message", "", parts...)
	}
	hd := x.w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(size(parts)))
	x.w.WriteHeader(status)
	// A client that stops reading fails the write past the deadline, as
	// on an event stream ([writeEvent]).
	_, done := writeDeadline(x.w, size(parts))
	defer done()
	for _, p := range parts {
		if _, err := x.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
