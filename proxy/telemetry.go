package proxy

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// What the proxy gives [Options].Telemetry: one client span per upstream
// request ([Proxy.startClient], in forward: the one place every forwarded
// request passes), the divert's span and token counts around
// divert.Decide ([Proxy.observe]: divert has no context), and upstream
// restarts. With Telemetry nil every call here is a nil check.

// restarted counts a restart of u ([upstream.Options].OnRestart).
func (p *Proxy) restarted(u *upstream.Upstream) {
	p.opts.Telemetry.UpstreamRestarted(context.Background(), u.Name())
}

// startClient starts the client span of one upstream request and writes
// its traceparent into params' _meta (SEP-414), made when the request
// had none. end ends the span with the request's error and result.
func (p *Proxy) startClient(ctx context.Context, server, method, what string, params any) (context.Context, func(raw []byte, err error)) {
	tel := p.opts.Telemetry
	if tel == nil {
		return ctx, func([]byte, error) {}
	}
	m, _ := params.(map[string]any)
	target := ""
	switch method {
	case "tools/call":
		target = what
	case "resources/read":
		target, _ = m["uri"].(string)
	case "prompts/get":
		target, _ = m["name"].(string)
	}
	ctx, cs := tel.StartClient(ctx, telemetry.Op{Method: method, Target: target, Server: server, Owner: p.opts.Owner})
	if cs == nil {
		// No tracer and no metrics: nothing to end, nothing to read
		// of the result for it.
		return ctx, func([]byte, error) {}
	}
	if m != nil && tel.Tracing() {
		meta, _ := m["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
			m["_meta"] = meta
		}
		tel.Inject(ctx, meta)
	}
	return ctx, func(raw []byte, err error) { cs.End(outcomeOf(method, raw, err)) }
}

// outcomeOf is how an upstream request ended, for its span.
func outcomeOf(method string, raw []byte, err error) telemetry.Outcome {
	if err != nil {
		var rerr *upstream.RPCError
		var ir *upstream.InputRequired
		switch {
		case errors.As(err, &rerr):
			return telemetry.Outcome{Err: err, ErrorType: strconv.Itoa(rerr.Code)}
		case errors.As(err, &ir):
			return telemetry.Outcome{} // a question for the client, not a failure
		case errors.Is(err, ErrUpstreamTimeout):
			return telemetry.Outcome{Err: err, ErrorType: "timeout"}
		case errors.Is(err, context.Canceled):
			return telemetry.Outcome{Err: err, ErrorType: "cancelled"}
		}
		return telemetry.Outcome{Err: err}
	}
	return telemetry.Outcome{IsError: method == "tools/call" && isErrorResult(raw)}
}

// isErrorResult reports whether a tools/call result says isError: true
// ([wire.IsErrorResult]).
func isErrorResult(raw []byte) bool {
	return wire.IsErrorResult(raw)
}

// observed is agent with its charges also told to telemetry (the charged
// and passed-through counters, the server span's tally), and the function
// to call with divert.Decide's outcome (nil: a result not decided, only
// charged). With telemetry off it is agent itself.
func (p *Proxy) observed(ctx context.Context, agent *divert.Agent, server, tool string) (*divert.Agent, func(divert.Outcome)) {
	tel := p.opts.Telemetry
	if tel == nil || agent == nil || agent.Account == nil {
		return agent, func(divert.Outcome) {}
	}
	sp := telemetry.ServerSpan(ctx)
	owner := p.opts.Owner
	if owner == "" {
		owner = sp.Owner()
	}
	// A charge may come before Decide returns or after (a large result
	// is counted in the background): passed says whether its tokens
	// reached the context unchanged, pending holds a charge made before
	// that was known.
	var mu sync.Mutex
	known, passed, pending := false, false, 0
	d := *agent
	d.Account = observedAccount{agent.Account, func(n int) {
		u := telemetry.Usage{Server: server, Tool: tool, Owner: owner, Charged: n}
		mu.Lock()
		if !known {
			pending += n
		} else if passed {
			u.PassedThrough = n
		}
		mu.Unlock()
		tel.RecordTokens(context.WithoutCancel(ctx), u)
		sp.Note(telemetry.Tally{Charged: n, Out: n})
	}}
	decided := func(out divert.Outcome) {
		mu.Lock()
		known, passed = true, !out.Diverted
		n := pending
		pending = 0
		mu.Unlock()
		if out.Diverted {
			tel.RecordTokens(ctx, telemetry.Usage{Server: server, Tool: tool, Owner: owner, Diverted: out.Pointer.Tokens})
			sp.Note(telemetry.Tally{Counted: out.Pointer.Tokens, Diverted: out.Pointer.Tokens, File: out.Pointer.Stored.Name})
			return
		}
		if n > 0 {
			tel.RecordTokens(ctx, telemetry.Usage{Server: server, Tool: tool, Owner: owner, PassedThrough: n})
			sp.Note(telemetry.Tally{Counted: n})
		}
	}
	return &d, decided
}

// observedAccount is an agent's account whose charges telemetry records
// too ([Proxy.observed]).
type observedAccount struct {
	divert.Account
	charged func(n int)
}

// Charge charges the agent's account, then tells telemetry.
func (o observedAccount) Charge(n int) {
	o.Account.Charge(n)
	o.charged(n)
}
