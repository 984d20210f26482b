package proxy

import (
	"context"
	"encoding/json"

	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/reference"
)

// Request is one client request on its way through the proxy: what the
// stages before the proxy (decode, identify, admit, route) made of it, in
// one typed value that every stage after them reads (forward, redact,
// count and charge, divert). The server's era builds it once per request
// (server/proxyrequest.go) and hands it to [Proxy.CallTool],
// [Proxy.ReadResource], [Proxy.GetPrompt] and the other methods that
// forward; nothing of it travels in the context.
//
// A Request is used by one call at a time; it is not safe for concurrent
// use. The methods that forward need one; [Proxy.SearchTools] and
// [Proxy.CallToolTarget] take nil (nothing charged).
type Request struct {
	// Session is where the upstream's questions and notifications made
	// while the request runs go (a 2025 session, or a 2026-07-28
	// request's own). nil for none: nothing can be asked.
	Session Session
	// Meta is the request's params._meta as the client sent it, less a
	// 2026-07-28 envelope (forwarded: progressToken, traceparent, …).
	Meta map[string]any
	// Agent is who the request is for, as the identify stage resolved
	// it: its divert settings and the budget it is charged to. nil
	// diverts by threshold only and charges nothing.
	Agent *divert.Agent
	// References resolves a tool call's references to the agent's
	// stored outputs ({"$scratchpad": {"file": …}}); nil sends the
	// arguments as they came.
	References *reference.Env
	// LogLevel is the level a 2026-07-28 request asked its log
	// messages at (its envelope's logLevel); "" is none asked: a 2025
	// session's level (logging/setLevel) rules.
	LogLevel string
	// Continuation, when not nil, makes the request a 2026-07-28 retry:
	// its upstream is sent the answers and its own requestState.
	Continuation *Continuation
	// ByModel says the model made the call itself (call_tool in search
	// mode): whatever the host, its result goes to the model, so an
	// app-only tool called this way is diverted and charged like any
	// other (apps.go).
	ByModel bool

	// charged says the count-and-charge stage is done for this request
	// ([Request.charge]).
	charged bool
}

// session is r's session, nil for a nil r.
func (r *Request) session() Session {
	if r == nil {
		return nil
	}
	return r.Session
}

// agent is r's agent, nil for a nil r.
func (r *Request) agent() *divert.Agent {
	if r == nil {
		return nil
	}
	return r.Agent
}

// continues puts a retry's answers in params (tools/call, prompts/get and
// resources/read take them).
func (r *Request) continues(method string, params any) {
	m, ok := params.(map[string]any)
	if r.Continuation == nil || !ok || (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
		return
	}
	if r.Continuation.Responses != nil {
		m["inputResponses"] = r.Continuation.Responses
	}
	if r.Continuation.State != "" {
		m["requestState"] = r.Continuation.State
	}
}

// charge is the count-and-charge stage, its one rule: what the model
// receives of a request's answer (res, valid JSON) is charged to the
// agent's budget exactly once, whatever route the answer took. divert
// charges what it counted to decide ([divert.Outcome].Charged: the
// caller then calls chargedBy); every other answer is charged here. The
// exploration tools charge their own answers in package agents.
func (r *Request) charge(ctx context.Context, res json.RawMessage) {
	if r != nil {
		r.chargeTo(ctx, r.Agent, res)
	}
}

// chargeTo is charge to a, r's agent as telemetry observes it
// ([Proxy.observed]).
func (r *Request) chargeTo(ctx context.Context, a *divert.Agent, res json.RawMessage) {
	if r == nil || r.charged || res == nil {
		return
	}
	r.charged = true
	divert.Charge(ctx, a, res, true)
}

// chargedBy records that divert's outcome charged the answer (or that it
// costs nothing: an app-only result).
func (r *Request) chargedBy(out divert.Outcome) {
	if r != nil && out.Charged {
		r.charged = true
	}
}
