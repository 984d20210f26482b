package server

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Telemetry of the requests the server receives ([Options].Telemetry):
// one server span per request, started and ended in the one place each
// era's requests all pass (2025: [session.route]; 2026-07-28:
// [Server.serve20260728]), and one audit record per tools/call, written
// from the span's tally (what agents, proxy and the own tools noted on
// it). With Telemetry nil every call here returns at its nil check.

// request is what the span of one request needs to know of it.
type request struct {
	method, target, session, version, id, owner string
	meta                                        map[string]any
	args                                        json.RawMessage
	px                                          *proxy.Proxy
}

// startRequest starts the server span of r.
func (s *Server) startRequest(ctx context.Context, r request) (context.Context, *telemetry.Span) {
	tel := s.opts.Telemetry
	if tel == nil {
		return ctx, nil
	}
	op := telemetry.Op{Method: r.method, Target: r.target, SessionID: r.session, ProtocolVersion: r.version,
		RequestID: r.id, Meta: r.meta, Owner: r.owner, Arguments: r.args}
	if r.method == "tools/call" && r.px != nil {
		op.Server = r.px.ToolServer(r.target)
	}
	return tel.StartServer(ctx, op)
}

// endRequest ends the span of a request that ended with err or with a
// result whose isError is isError, and audits a tools/call.
func (s *Server) endRequest(ctx context.Context, sp *telemetry.Span, r request, isError bool, err error) {
	if sp == nil {
		return
	}
	o := telemetry.Outcome{Err: err, IsError: isError}
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		o.ErrorType = strconv.FormatInt(je.Code, 10)
	} else if we, ok := errors.AsType[*wire.Error](err); ok {
		o.ErrorType = strconv.Itoa(we.Code)
	}
	d := sp.Duration()
	sp.End(o)
	if r.method != "tools/call" {
		return
	}
	tel := s.opts.Telemetry
	t := sp.Tally()
	rec := telemetry.Record{Owner: r.owner, Agent: t.Agent, Run: t.Run, Role: t.Role, Tool: r.target,
		Outcome: telemetry.OutcomeText(o), TokensIn: t.Counted, TokensOut: t.Out, Diverted: t.Diverted, File: t.File,
		ByReference: t.ByReference, Referenced: t.Referenced,
		DurationMS: float64(d) / float64(time.Millisecond), TraceID: sp.TraceID()}
	if r.px != nil {
		rec.Server = r.px.ToolServer(r.target)
	}
	if rec.TokensIn == 0 {
		rec.TokensIn = rec.TokensOut // passed through or an own tool's: what was counted reached the context
	}
	if t.Budget != nil {
		if left, size, ok := t.Budget(); ok {
			rec.BudgetLeft, rec.BudgetSize = left, size
			tel.BudgetRemaining(ctx, r.owner, t.Agent, left)
		}
	}
	tel.Audit(rec)
}

// request2025 is what a 2025 request's span names, read from go-sdk's
// decoded params.
func (se *session) request2025(method string, req mcp.Request) request {
	r := request{method: method, session: se.id, owner: se.owner, px: se.proxy(), id: idText(se.ids.sent(req.GetExtra()))}
	if ss := se.serverSession(); ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			r.version = ip.ProtocolVersion
		}
	}
	switch p := req.GetParams().(type) {
	// A typed nil is a request without params.
	case *mcp.CallToolParamsRaw:
		if p != nil {
			r.target, r.args, r.meta = p.Name, p.Arguments, p.Meta
		}
	case *mcp.ReadResourceParams:
		if p != nil {
			r.target, r.meta = p.URI, p.Meta
		}
	case *mcp.GetPromptParams:
		if p != nil {
			r.target, r.meta = p.Name, p.Meta
		}
	case *mcp.InitializeParams:
		if p != nil {
			r.version, r.meta = p.ProtocolVersion, p.Meta
		}
	case *skillsParams: // skills/get, resources/directory/read (skills.go)
		if p != nil {
			r.target, r.meta = p.URI, p.Meta
		}
	}
	return r
}

// isError2025 reports whether a 2025 tools/call answer is a result
// with isError: an upstream's raw one or an own tool's.
func isError2025(res mcp.Result) bool {
	switch r := res.(type) {
	case *rawCallTool:
		return rawIsError(r.raw)
	case *mcp.CallToolResult:
		return r.IsError
	}
	return false
}

// rawIsError reports whether a raw result says isError: true at its top
// level ([wire.IsErrorResult]: a big one is not walked again for it).
func rawIsError(raw []byte) bool { return wire.IsErrorResult(raw) }

// request20260728Of is what a 2026-07-28 request's span names: its
// params are read again for the name or URI and _meta, only with
// telemetry on.
func (s *Server) request20260728Of(ctx context.Context, r *request20260728) request {
	out := request{method: r.method, version: r.env.Version, id: idText(r.id), owner: r.ag.owner, px: r.ag.px}
	if s.opts.Telemetry == nil {
		return out
	}
	var p struct {
		Name      string          `json:"name"`
		URI       string          `json:"uri"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	_ = json.Unmarshal(r.params, &p)
	out.target, out.args, out.meta = p.Name, p.Arguments, p.Meta
	if p.URI != "" {
		out.target = p.URI
	}
	if out.owner == "" {
		out.owner = frontdoor.CallerOf(ctx).Owner
	}
	return out
}
