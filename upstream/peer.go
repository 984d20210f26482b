package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// peer is the JSON-RPC side of an upstream connection, whatever carries
// the bytes (a child's stdin/stdout, SSE streams and POSTs). It matches
// responses to calls, serves the upstream's own requests (stopped by its
// notifications/cancelled) and delivers notifications and responses in the
// order they arrived, off the transport's read loop. The transport hands it
// each whole message with [peer.dispatch] and sends for it with send.
//
// Notifications and responses share one queue, run by one goroutine
// ([peer.deliver]): a response is handed to its Call only after every
// notification dispatched before it has been handled and its handler has
// returned. That is the order [Upstream] promises.
type peer struct {
	name string
	h    handlers
	log  *slog.Logger

	// send writes one encoded message. ctx is the sender's: a transport
	// that can abort a write (an HTTP POST) honours it.
	send func(ctx context.Context, msg []byte) error
	// sendFailed turns a request that could not be sent into Call's
	// error, with what the transport knows about why; nil keeps the send
	// error. Call returns it as a [*notSentError] unless the caller gave
	// up.
	sendFailed func(ctx context.Context, err error) error

	nextID atomic.Int64

	// envelope, when set, is the 2026-07-28 envelope every request
	// carries in params._meta (a modern upstream); nil sends params as
	// given (2025). See [peer.setEnvelope].
	envelope atomic.Pointer[func(ctx context.Context) wire.Envelope]
	// cancelByClose: giving up a call is closing its stream (a 2026-07-28
	// HTTP POST), so no notifications/cancelled is sent.
	cancelByClose atomic.Bool

	mu      sync.Mutex
	pending map[string]chan reply
	callCtx map[string]context.Context    // the context of each call in pending
	inbound map[string]context.CancelFunc // requests from the upstream being served

	*lifetime

	events  chan func()    // unprompted messages, delivered in order off the read loop
	serving sync.WaitGroup // serveRequest goroutines, for a transport that waits for them on Close
}

// cancelNoticeTimeout bounds telling the upstream that a call was given up:
// the caller is already done, and an HTTP upstream that does not answer
// the notice must not hold it.
const cancelNoticeTimeout = 5 * time.Second

func newPeer(name string, h handlers, log *slog.Logger, send func(context.Context, []byte) error) *peer {
	return &peer{
		name:     name,
		h:        h,
		log:      log,
		send:     send,
		pending:  map[string]chan reply{},
		callCtx:  map[string]context.Context{},
		inbound:  map[string]context.CancelFunc{},
		lifetime: newLifetime(),
		events:   make(chan func(), 256),
	}
}

// reply is what ends a call: a response, or an error from the transport
// that lost it.
type reply struct {
	msg rpcMessage
	err error
}

// rpcMessage is any JSON-RPC message; which fields are set says which kind.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`

	// resultType is the result's, when the reader found it as the
	// message arrived (typed): [wire.ResultTypeOfMembers].
	resultType string
	typed      bool
}

// rpcError is an error response; unlike rpcMessage it always carries its
// id, even when that id is null.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *RPCError       `json:"error"`
}

// dispatch handles one message the upstream sent. For a response it
// returns the response's id, so that a transport waiting for one on a
// stream knows it came.
func (p *peer) dispatch(msg []byte) (responseID json.RawMessage) {
	m, err := decodeMessage(msg)
	return p.handle(msg, m, err, nil)
}

// dispatchOn is dispatch for a message that came on the answer stream of
// the call with id related (a streamable HTTP POST's): a request in it
// is that call's ([CallContext]).
func (p *peer) dispatchOn(msg []byte, related json.RawMessage) (responseID json.RawMessage) {
	m, err := decodeMessage(msg)
	return p.handle(msg, m, err, related)
}

// dispatchScanned is dispatch for a message validated as it arrived: its
// members and the verdict are given.
func (p *peer) dispatchScanned(msg []byte, sc *scanned) (responseID json.RawMessage) {
	return p.dispatchScannedOn(msg, sc, nil)
}

// dispatchScannedOn is dispatchScanned for a message on the answer
// stream of the call with id related.
func (p *peer) dispatchScannedOn(msg []byte, sc *scanned, related json.RawMessage) (responseID json.RawMessage) {
	m, err := decodeScanned(msg, sc)
	return p.handle(msg, m, err, related)
}

// handle acts on a decoded message (or the error decoding it).
func (p *peer) handle(msg []byte, m rpcMessage, err error, related json.RawMessage) (responseID json.RawMessage) {
	if err != nil {
		// JSON-RPC answers a message it cannot parse with a parse error
		// and a null id; the upstream may log it, we carry on.
		p.log.Warn("upstream sent invalid JSON-RPC; answered with a parse error", "server", p.name, "error", err, "line", truncate(string(msg), 200))
		_ = p.write(context.Background(), rpcError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &RPCError{Code: -32700, Message: "Parse error: " + err.Error()}})
		if len(m.ID) > 0 {
			// An answer broken in its result, its id read before: its
			// call fails now, with the reason, not at its timeout.
			p.abandon(m.ID, fmt.Errorf("%w: %w", ErrInvalidResponse, err))
		}
		return nil
	}
	switch {
	case m.Method == "notifications/cancelled" && len(m.ID) == 0:
		// The upstream gave up on a request it sent us (sampling,
		// elicitation): stop forwarding it.
		var params struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &params) == nil {
			p.mu.Lock()
			cancel := p.inbound[string(params.RequestID)]
			_, ours := p.pending[string(params.RequestID)]
			p.mu.Unlock()
			if cancel != nil {
				cancel()
			} else if ours {
				// It names a request of ours: the upstream gave up on it
				// (a 2026-07-28 server ends a stdio listen so).
				p.abandon(params.RequestID, errCancelledByUpstream)
			}
		}
	case m.Method != "" && len(m.ID) == 0:
		if p.h.notify != nil {
			p.queue(func() { p.h.notify(m.Method, m.Params) })
		}
	case m.Method != "":
		// Requests from the upstream (sampling, elicitation, roots, ping)
		// may take as long as a human does: one goroutine each.
		var call context.Context
		if related != nil {
			p.mu.Lock()
			call = p.callCtx[string(related)]
			p.mu.Unlock()
		}
		p.serving.Add(1)
		go p.serveRequest(m, call)
	case len(m.ID) == 0:
		// A response without id cannot be matched; one with an id but
		// neither result nor error fails its call (see Call).
		p.log.Warn("upstream sent a JSON-RPC message that is neither request, notification nor response; ignored", "server", p.name, "line", truncate(string(msg), 200))
	default:
		// Responses go through the same ordered queue as notifications,
		// so progress sent before a result reaches the caller before it.
		p.settle(m.ID, reply{msg: m})
		return m.ID
	}
	return nil
}

// skipped handles a message that was too large to read: the call it
// answers (its id found in its first or last bytes, or else the only call
// in flight) fails with a [*TooLargeError].
func (p *peer) skipped(t *tooLong) {
	id := idOf(t.head, t.tail)
	if id == nil {
		p.mu.Lock()
		if len(p.pending) == 1 {
			for k := range p.pending {
				id = json.RawMessage(k)
			}
		}
		p.mu.Unlock()
	}
	err := &TooLargeError{Size: t.size, Max: int64(p.h.maxMessage)}
	p.log.Warn("upstream sent a message over max_result_bytes; skipped", "server", p.name, "bytes", t.size, "max_result_bytes", p.h.maxMessage, "id", string(id))
	if id != nil {
		p.abandon(id, err)
	}
}

// abandon fails the call with id (as sent) with err, after whatever was
// dispatched before: a transport uses it when it knows the response will
// never come.
func (p *peer) abandon(id json.RawMessage, err error) {
	p.settle(id, reply{err: err})
}

// settle hands r to the call with id (as sent), in turn with everything
// dispatched before it; a call no longer waiting is not told.
func (p *peer) settle(id json.RawMessage, r reply) {
	p.queue(func() {
		key := string(id)
		p.mu.Lock()
		ch := p.pending[key]
		delete(p.pending, key)
		delete(p.callCtx, key)
		p.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	})
}

// callKey is the context key of [CallContext].
type callKey struct{}

// CallContext returns, for the context [Options.OnRequest] is given, the
// context of the call whose answer stream carried the request: the
// client call it serves, known for sure. Only streamable HTTP carries
// requests on a call's own stream; over stdio and SSE, and for a request
// on the listening stream, ok is false.
func CallContext(ctx context.Context) (call context.Context, ok bool) {
	call, ok = ctx.Value(callKey{}).(context.Context)
	return call, ok
}

func (p *peer) queue(f func()) {
	select {
	case p.events <- f:
	case <-p.done:
	}
}

// deliver runs queued deliveries until the connection ends; the
// transport starts it.
func (p *peer) deliver() {
	for {
		select {
		case f := <-p.events:
			f()
		case <-p.done:
			return
		}
	}
}

// serveRequest answers one request of the upstream; call is the context
// of the call whose answer stream carried it, or nil.
func (p *peer) serveRequest(m rpcMessage, call context.Context) {
	defer p.serving.Done()
	resp := rpcMessage{JSONRPC: "2.0", ID: m.ID}
	if m.Method == "ping" {
		resp.Result = json.RawMessage(`{}`)
	} else if p.h.request == nil {
		resp.Error = &RPCError{Code: -32601, Message: "method not found: " + m.Method}
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		if call != nil {
			ctx = context.WithValue(ctx, callKey{}, call)
		}
		key := string(m.ID)
		p.mu.Lock()
		p.inbound[key] = cancel
		p.mu.Unlock()
		go func() {
			select {
			case <-p.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		res, err := p.h.request(ctx, m.Method, m.Params)
		cancelled := ctx.Err() != nil
		cancel()
		p.mu.Lock()
		delete(p.inbound, key)
		p.mu.Unlock()
		if cancelled {
			// Cancelled by the upstream (or it exited): it expects no answer.
			return
		}
		var rerr *RPCError
		switch {
		case errors.As(err, &rerr):
			resp.Error = rerr
		case err != nil:
			resp.Error = &RPCError{Code: -32603, Message: err.Error()}
		default:
			resp.Result = res
		}
	}
	if err := p.write(context.Background(), resp); err != nil {
		p.log.Debug("reply to upstream request failed", "server", p.name, "error", err)
	}
}

// write encodes v and sends it, unless the connection is already gone.
func (p *peer) write(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	select {
	case <-p.done:
		return fmt.Errorf("%w: %w", errConnEnded, p.Err())
	default:
	}
	return p.send(ctx, b)
}

func (p *peer) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, _, err := p.callTyped(ctx, method, params)
	return res, err
}

// callTyped is Call that also returns the result's resultType when the
// reader found it as the answer arrived (a long message, validated as it
// came), else "": the caller asks [wire.ParseResultType] then.
func (p *peer) callTyped(ctx context.Context, method string, params any) (json.RawMessage, string, error) {
	id := strconv.FormatInt(p.nextID.Add(1), 10)
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.pending[id] = ch
	p.callCtx[id] = ctx
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.pending, id)
		delete(p.callCtx, id)
		p.mu.Unlock()
	}
	if env := p.envelope.Load(); env != nil {
		withEnv, err := envelopeParams(params, (*env)(ctx))
		if err != nil {
			forget()
			return nil, "", &notSentError{fmt.Errorf("%s: %w", method, err)}
		}
		params = withEnv
	}
	req := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params,omitempty"`
	}{"2.0", json.RawMessage(id), method, params}
	if err := p.write(ctx, req); err != nil {
		forget()
		if p.sendFailed != nil {
			err = p.sendFailed(ctx, err)
		}
		if ctx.Err() != nil {
			return nil, "", err
		}
		return nil, "", &notSentError{err}
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, "", r.err
		}
		res, err := r.msg.outcome(method)
		if err != nil || !r.msg.typed {
			return res, "", err
		}
		return res, r.msg.resultType, nil
	case <-ctx.Done():
		forget()
		if p.cancelByClose.Load() || ctx.Value(quietKey{}) != nil {
			// The POST's stream closed with ctx: that is the cancel. Or
			// a probe the upstream may not even understand: say nothing.
			return nil, "", ctx.Err()
		}
		// Tell the upstream to stop working on it.
		nctx, cancel := context.WithTimeout(context.Background(), cancelNoticeTimeout)
		_ = p.Notify(nctx, "notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(id), "reason": ctx.Err().Error(),
		})
		cancel()
		return nil, "", ctx.Err()
	case <-p.done:
		forget()
		return nil, "", p.Err()
	}
}

func (p *peer) Notify(ctx context.Context, method string, params any) error {
	return p.write(ctx, struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
}

// setEnvelope makes every later request carry env's envelope (nil: none,
// the 2025 wire).
func (p *peer) setEnvelope(env func(ctx context.Context) wire.Envelope) {
	if env == nil {
		p.envelope.Store(nil)
		return
	}
	p.envelope.Store(&env)
}

// quietKey marks a call whose giving up is not told to the upstream (a
// server/discover probe to a server that may predate it).
type quietKey struct{}

// envelopeParams is params (any value that encodes to an object, or nil)
// with env merged into its _meta by [wire.EncodeEnvelope].
func envelopeParams(params any, env wire.Envelope) (json.RawMessage, error) {
	var raw json.RawMessage
	switch v := params.(type) {
	case nil:
	case json.RawMessage:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return wire.EncodeEnvelope(raw, env)
}

// outcome is what a response to method means: its result, or its error
// as an [*RPCError].
func (m rpcMessage) outcome(method string) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error.bounded()
	}
	if m.Result == nil {
		return nil, fmt.Errorf("%w: response to %s has neither result nor error", ErrInvalidResponse, method)
	}
	return m.Result, nil
}
