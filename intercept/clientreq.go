package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// initializingWait bounds how long an upstream's request made outside any
// call waits for the only client session to finish initializing.
const initializingWait = 10 * time.Second

// JSON-RPC error codes the proxy answers an upstream's own requests with.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// onRequest serves a request an upstream sends while it handles a call:
// sampling/createMessage, elicitation/create or roots/list. It goes to the
// client session of the call in flight on that upstream (see
// [sessions.caller]) and lives no longer than that call; with no call in
// flight, to the only client session, for at most the upstream's timeout. The answer, or
// the client's error, goes back to the upstream. When the upstream
// cancels its request, or the call ends first, the client is sent
// notifications/cancelled for it.
func (r *Router) onRequest(u *Upstream, ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	r.mu.RLock()
	srv := r.srv
	r.mu.RUnlock()
	switch method {
	case string(mcp.MethodSamplingCreateMessage), string(mcp.MethodElicitationCreate), string(mcp.MethodListRoots):
	default:
		return nil, &RPCError{Code: codeMethodNotFound, Message: "Method not found: " + method}
	}
	if srv == nil {
		return nil, &RPCError{Code: codeInternal, Message: method + ": the proxy is not serving yet"}
	}
	callCtx, ok := r.sess.caller(u)
	if !ok {
		// No call to this upstream is in flight (a server asking for
		// roots when it starts, or when they change). With one client,
		// it goes where a direct connection would have sent it; with
		// several, nothing says which.
		cs, n := r.sess.onlyWait(ctx, initializingWait)
		if cs == nil {
			return nil, &RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: no client request to %q is in flight and %d clients are connected; scratchpad-mcp forwards requests from an upstream to the client whose call it is handling, or to the only client", method, u.Config().Name, n)}
		}
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(srv.WithContext(context.Background(), cs), u.Config().Timeout)
		defer cancel()
	}
	cs := server.ClientSessionFromContext(callCtx)
	if err := r.clientSupports(cs, method, params); err != nil {
		return nil, err
	}
	// Ends when the upstream cancels its request or the client's call ends
	// (its timeout included): a client that never answers cannot hold the
	// upstream beyond that.
	fctx, cancel := context.WithCancel(callCtx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	// Note the id mcp-go sends the request with, to cancel it at the
	// client if it is abandoned (see sentRequests).
	session := sessionID(cs)
	if method == string(mcp.MethodElicitationCreate) && session != "" {
		// A URL-mode elicitation's completion notice goes where it was asked.
		var p struct {
			Mode          string `json:"mode"`
			ElicitationID string `json:"elicitationId"`
		}
		if json.Unmarshal(params, &p) == nil && p.Mode == string(mcp.ElicitationModeURL) && p.ElicitationID != "" {
			r.sess.elicited(p.ElicitationID, session)
		}
	}
	unanswered := &RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: the client did not answer before its call to %q ended", method, u.Config().Name)}
	if st := r.sse.stream(session); st != nil {
		// A legacy SSE client: mcp-go cannot ask it, the proxy does.
		res, err := r.sse.request(fctx, st, method, params)
		var rerr *RPCError
		switch {
		case err == nil:
			return res, nil
		case errors.As(err, &rerr):
			return nil, rerr // the client's own error, code and all
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case fctx.Err() != nil:
			return nil, unanswered
		default:
			return nil, &RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: %v", method, err)}
		}
	}
	slot := r.sent.expect(fctx, session, method)

	var res any
	var err error
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		var req mcp.CreateMessageRequest
		if err := json.Unmarshal(params, &req.CreateMessageParams); err != nil {
			return nil, &RPCError{Code: codeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		req.Method = method
		res, err = srv.RequestSampling(fctx, req)
	case string(mcp.MethodElicitationCreate):
		var req mcp.ElicitationRequest
		if err := json.Unmarshal(params, &req.Params); err != nil {
			return nil, &RPCError{Code: codeInvalidParams, Message: "Invalid params: " + err.Error()}
		}
		req.Method = method
		res, err = srv.RequestElicitation(fctx, req)
	case string(mcp.MethodListRoots):
		var req mcp.ListRootsRequest
		req.Method = method
		res, err = srv.RequestRoots(fctx, req)
	}
	sentID := r.sent.done(slot)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			reason := fmt.Sprintf("the call to %q it served ended", u.Config().Name)
			if ctx.Err() != nil {
				reason = fmt.Sprintf("cancelled by upstream %q", u.Config().Name)
			}
			if sentID != nil && session != "" {
				// The client may still be working on it (a person
				// typing an answer): tell it to stop.
				r.notify(srv, session, "notifications/cancelled", map[string]any{"requestId": sentID, "reason": reason})
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, unanswered
		}
		return nil, &RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: the client answered with an error: %v", method, err)}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, &RPCError{Code: codeInternal, Message: err.Error()}
	}
	return b, nil
}

// clientSupports checks the capability the client declared at initialize:
// the upstream sees exactly what the calling client can do.
func (r *Router) clientSupports(cs server.ClientSession, method string, params json.RawMessage) error {
	var caps mcp.ClientCapabilities
	if info, ok := cs.(server.SessionWithClientInfo); ok {
		caps = info.GetClientCapabilities()
	} else if c, ok := r.sse.capsOf(sessionID(cs)); ok {
		caps = c
	} else {
		return &RPCError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s (the client session declares no capabilities)", method)}
	}
	missing := ""
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		if caps.Sampling == nil {
			missing = "sampling"
		}
	case string(mcp.MethodElicitationCreate):
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(params, &p)
		switch {
		case caps.Elicitation == nil:
			missing = "elicitation"
		case p.Mode == string(mcp.ElicitationModeURL) && caps.Elicitation.URL == nil:
			missing = "elicitation.url"
		}
	case string(mcp.MethodListRoots):
		if caps.Roots == nil {
			missing = "roots"
		}
	}
	if missing != "" {
		return &RPCError{Code: codeMethodNotFound, Message: fmt.Sprintf("Method not found: %s (the client did not declare the %s capability)", method, missing)}
	}
	return nil
}

func sessionID(cs server.ClientSession) string {
	if cs == nil {
		return ""
	}
	return cs.SessionID()
}
