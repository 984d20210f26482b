package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// initializingWait bounds how long an upstream's request made outside any
// call waits for a client session to attach.
const initializingWait = 10 * time.Second

// JSON-RPC error codes the proxy answers an upstream's own requests with.
const (
	codeMethodNotFound = -32601
	codeInternal       = -32603
)

// onRequest serves a request an upstream sends while it handles a call:
// sampling/createMessage, elicitation/create or roots/list. It goes to the
// client session of the call in flight on that upstream (see
// [sessions.caller]) and lives no longer than that call; with no call in
// flight, to the only client session, for at most the upstream's
// timeout. The answer, or the client's error, goes back to the upstream.
// When the upstream cancels its request (ctx ends), or the call ends
// first, the request is cancelled at the client.
func (p *Proxy) onRequest(ctx context.Context, u *upstream.Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
	switch method {
	case "sampling/createMessage", "elicitation/create", "roots/list":
	default:
		return nil, &upstream.RPCError{Code: codeMethodNotFound, Message: "Method not found: " + method}
	}
	// The redact stage: the question reaches the client masked (mask.go).
	params, ok := p.mask(u.Config(), method, params)
	if !ok {
		return nil, &upstream.RPCError{Code: codeInternal, Message: method + ": the request cannot be scanned for secrets; it was not put to the client"}
	}
	c, ok, err := p.callerOf(ctx, u, method, params)
	if err != nil {
		return nil, err
	}
	if !ok {
		// No call to this upstream is in flight (a server asking for
		// roots when it starts, or when they change). With one client,
		// it goes where a direct connection would have sent it; with
		// several, nothing says which.
		only, n := p.sessions.onlyWait(ctx, initializingWait)
		if only == nil {
			return nil, &upstream.RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: no client request to %q is in flight and %d clients are connected; scratchpad-mcp forwards requests from an upstream to the client whose call it is handling, or to the only client", method, u.Name(), n)}
		}
		cctx, cancel := context.WithTimeout(context.Background(), u.Config().Timeout)
		defer cancel()
		c = caller{ctx: cctx, sess: only}
	}
	if err := supports(c.sess.Capabilities(), method, params); err != nil {
		return nil, err
	}
	// Ends when the upstream cancels its request or the client's call ends
	// (its timeout included): a client that never answers cannot hold the
	// upstream beyond that.
	fctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	if method == "elicitation/create" {
		// A URL-mode elicitation's completion notice goes where it was asked.
		var e struct {
			Mode          string `json:"mode"`
			ElicitationID string `json:"elicitationId"`
		}
		if json.Unmarshal(params, &e) == nil && e.Mode == "url" && e.ElicitationID != "" {
			p.sessions.elicited(e.ElicitationID, c.sess.ID())
		}
	}
	res, err := c.sess.Request(fctx, method, params)
	var rerr *upstream.RPCError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &rerr):
		return nil, rerr // the client's own error, code and all
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case fctx.Err() != nil:
		return nil, &upstream.RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: the client did not answer before its call to %q ended", method, u.Name())}
	default:
		return nil, &upstream.RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: %v", method, err)}
	}
}

// callerKey marks the context of a call forwarded to an upstream with
// the client session that made it (see [Proxy.forward]).
type callerKey struct{}

// callerOf finds the client call an upstream's request serves, never
// guessing: the call on whose answer stream it came (streamable HTTP),
// else the call whose progress token its _meta names, else the calls in
// flight on u when they are all one session's. With
// calls of several sessions in flight, and no stream to tell them apart,
// it is refused: MCP does not say which call a request is for, and the
// wrong session would read another's prompt and answer in its place. ok
// is false when no call is in flight at all.
func (p *Proxy) callerOf(ctx context.Context, u *upstream.Upstream, method string, params json.RawMessage) (c caller, ok bool, err error) {
	if call, found := upstream.CallContext(ctx); found {
		if s, isOurs := call.Value(callerKey{}).(Session); isOurs && call.Err() == nil {
			return caller{ctx: call, sess: s}, true, nil
		}
	}
	// A request that names the progress token of the call it serves
	// (some servers pass it on in _meta) belongs to that call.
	var m struct {
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &m) == nil {
		if tok, isString := m.Meta.ProgressToken.(string); isString {
			p.progressMu.Lock()
			pr := p.progress[tok]
			p.progressMu.Unlock()
			if pr != nil && pr.ctx.Err() == nil {
				return caller{ctx: pr.ctx, sess: pr.sess}, true, nil
			}
		}
	}
	c, sessions := p.sessions.caller(u)
	switch {
	case sessions == 0:
		return caller{}, false, nil
	case sessions > 1:
		return caller{}, false, &upstream.RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: calls of %d client sessions are in flight on %q and nothing says which one this request is for; scratchpad-mcp refuses it rather than guess (a streamable HTTP upstream that sends it on the call's own stream is routed exactly)", method, sessions, u.Name())}
	}
	return c, true, nil
}

// supports checks the capability the client declared at initialize: the
// upstream sees exactly what the calling client can do.
func supports(caps ClientCapabilities, method string, params json.RawMessage) error {
	missing := ""
	switch method {
	case "sampling/createMessage":
		if !caps.Sampling {
			missing = "sampling"
		}
	case "elicitation/create":
		var e struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &e)
		switch {
		case !caps.Elicitation:
			missing = "elicitation"
		case e.Mode == "url" && !caps.ElicitationURL:
			missing = "elicitation.url"
		}
	case "roots/list":
		if !caps.Roots {
			missing = "roots"
		}
	}
	if missing != "" {
		return &upstream.RPCError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s (the client did not declare the %s capability)", method, missing)}
	}
	return nil
}
