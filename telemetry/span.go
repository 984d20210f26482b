package telemetry

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Op describes one MCP request as the server received it, or as the
// proxy sends it upstream.
type Op struct {
	Method          string         // mcp.method.name: "tools/call", "resources/read", …
	Target          string         // the tool, prompt or resource URI; "" for none
	SessionID       string         // mcp.session.id; "" without a session (stdio, 2026-07-28)
	ProtocolVersion string         // mcp.protocol.version
	RequestID       string         // jsonrpc.request.id, as text
	Meta            map[string]any // params._meta: traceparent/tracestate are read from it
	// Server is the upstream server's name (StartClient; and StartServer
	// when the call routes to one): a metric label, bounded.
	Server string
	// Owner is the bearer token owner ("" without tokens): a metric
	// label, bounded.
	Owner string
	// Arguments are put on the span only with record_arguments.
	Arguments json.RawMessage
}

// Outcome is how a call ended, for [Span.End].
type Outcome struct {
	// Err is a protocol or transport failure; nil for a result.
	Err error
	// ErrorType names Err for error.type (e.g. "timeout",
	// "upstream_unavailable", a JSON-RPC code as text); "" with Err set
	// uses "_OTHER".
	ErrorType string
	// IsError is a tool result with isError: error.type = "tool_error".
	IsError bool
}

// errorType is error.type of o, "" for success.
func (o Outcome) errorType() string {
	switch {
	case o.Err != nil && o.ErrorType != "":
		return o.ErrorType
	case o.Err != nil:
		return semconv.ErrorTypeOther.Value.AsString()
	case o.ErrorType != "":
		return o.ErrorType
	case o.IsError:
		return ErrorTypeToolError
	}
	return ""
}

// ErrorTypeToolError is error.type of a tool result with isError true.
const ErrorTypeToolError = "tool_error"

// spanKind tells the four kinds of [Span] apart for End's metrics.
type spanKind uint8

const (
	kindServer spanKind = iota
	kindClient
	kindDivert
	kindExplore
)

// Span is one timed operation. A nil *Span (telemetry off) is valid: all
// its methods do nothing.
type Span struct {
	p     *Provider
	span  trace.Span // a no-op span when only metrics are on
	kind  spanKind
	op    Op
	start time.Time
	tally *tally // server spans: what the call's layers noted ([Span.Note])
}

// Our own span attributes (no convention names them).
const (
	AttrTokensCounted  = attribute.Key("scratchpad.tokens.counted")
	AttrTokensDiverted = attribute.Key("scratchpad.tokens.diverted")
	AttrTokensCharged  = attribute.Key("scratchpad.tokens.charged")
	AttrFile           = attribute.Key("scratchpad.file")
	AttrBudgetLeft     = attribute.Key("scratchpad.budget.remaining")
	AttrUpstream       = attribute.Key("scratchpad.upstream")
	AttrArguments      = attribute.Key("scratchpad.arguments")
)

// maxArgumentBytes bounds the arguments put on a span.
const maxArgumentBytes = 4 << 10

// StartServer starts the span of one request the server received,
// continuing the client's trace when op.Meta carries a valid traceparent
// (SEP-414); a missing or malformed one starts a new trace. The context
// returned carries the span: pass it on to [Provider.StartClient],
// [Provider.StartDivert] and [Provider.StartExplore].
func (p *Provider) StartServer(ctx context.Context, op Op) (context.Context, *Span) {
	if p == nil {
		return ctx, nil
	}
	// Without a tracer or metrics the span still tallies its call: the
	// audit log and the dashboard's recent calls are written from it.
	if p.tracer != nil && len(op.Meta) > 0 {
		ctx = p.propag.Extract(ctx, metaCarrier(op.Meta))
	}
	ctx, s := p.start(ctx, op, kindServer, trace.SpanKindServer)
	s.tally = &tally{}
	return context.WithValue(ctx, serverSpanKey{}, s), s
}

// StartClient starts the span of the proxy's request to upstream
// op.Server, a child of the server span in ctx. Call [Provider.Inject]
// with the returned context on the upstream request's _meta.
func (p *Provider) StartClient(ctx context.Context, op Op) (context.Context, *Span) {
	if p == nil || (p.tracer == nil && p.m == nil) {
		return ctx, nil
	}
	return p.start(ctx, op, kindClient, trace.SpanKindClient)
}

// StartDivert starts the span of counting and storing one result of
// server's tool; set what it counted and stored with [Span.SetTokens] and
// [Span.SetFile].
func (p *Provider) StartDivert(ctx context.Context, server, tool string) (context.Context, *Span) {
	if p == nil || p.tracer == nil {
		return ctx, nil
	}
	return p.start(ctx, Op{Method: "divert", Target: server + "/" + tool, Server: server}, kindDivert, trace.SpanKindInternal)
}

// StartExplore starts the span of one exploration call (head, grep, …)
// over a stored file.
func (p *Provider) StartExplore(ctx context.Context, tool, file string) (context.Context, *Span) {
	if p == nil || p.tracer == nil {
		return ctx, nil
	}
	ctx, s := p.start(ctx, Op{Method: "explore", Target: tool}, kindExplore, trace.SpanKindInternal)
	s.SetFile(file)
	return ctx, s
}

func (p *Provider) start(ctx context.Context, op Op, kind spanKind, sk trace.SpanKind) (context.Context, *Span) {
	s := &Span{p: p, kind: kind, op: op, start: time.Now()}
	if p.tracer == nil {
		s.span = trace.SpanFromContext(ctx) // non-recording; End does not end the parent
		return ctx, s
	}
	name := op.Method
	if op.Target != "" {
		name += " " + op.Target
	}
	attrs := make([]attribute.KeyValue, 0, 10)
	if kind == kindServer || kind == kindClient {
		attrs = append(attrs, semconv.McpMethodNameKey.String(op.Method))
		if op.SessionID != "" {
			attrs = append(attrs, semconv.McpSessionID(op.SessionID))
		}
		if op.ProtocolVersion != "" {
			attrs = append(attrs, semconv.McpProtocolVersion(op.ProtocolVersion))
		}
		if op.RequestID != "" {
			attrs = append(attrs, semconv.JSONRPCRequestID(op.RequestID))
		}
		switch op.Method {
		case "tools/call":
			attrs = append(attrs, semconv.GenAIToolName(op.Target), semconv.GenAIOperationNameExecuteTool)
		case "resources/read", "resources/subscribe", "resources/unsubscribe":
			attrs = append(attrs, semconv.McpResourceURI(op.Target))
		case "prompts/get":
			attrs = append(attrs, semconv.GenAIPromptName(op.Target))
		}
	}
	if op.Server != "" {
		attrs = append(attrs, AttrUpstream.String(op.Server))
	}
	if p.cfg.RecordArguments && len(op.Arguments) > 0 {
		attrs = append(attrs, AttrArguments.String(truncate(string(op.Arguments), maxArgumentBytes)))
	}
	ctx, s.span = p.tracer.Start(ctx, name, trace.WithSpanKind(sk), trace.WithAttributes(attrs...), trace.WithTimestamp(s.start))
	return ctx, s
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Tokens are a call's figures, for [Span.SetTokens]; zero fields are
// left off.
type Tokens struct {
	Counted    int // the result's tokens as counted
	Diverted   int // tokens stored instead of returned
	Charged    int // tokens charged to the agent's budget
	BudgetLeft int // the agent's budget after the call; -1: unknown
}

// SetTokens puts the call's token figures on the span. The metrics of
// the same figures are recorded by [Provider.RecordTokens].
func (s *Span) SetTokens(t Tokens) {
	if s == nil || !s.span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if t.Counted != 0 {
		attrs = append(attrs, AttrTokensCounted.Int(t.Counted))
	}
	if t.Diverted != 0 {
		attrs = append(attrs, AttrTokensDiverted.Int(t.Diverted))
	}
	if t.Charged != 0 {
		attrs = append(attrs, AttrTokensCharged.Int(t.Charged))
	}
	if t.BudgetLeft >= 0 {
		attrs = append(attrs, AttrBudgetLeft.Int(t.BudgetLeft))
	}
	s.span.SetAttributes(attrs...)
}

// SetFile names the stored output the span wrote or read (a span
// attribute only: file names are never metric labels).
func (s *Span) SetFile(name string) {
	if s == nil || name == "" || !s.span.IsRecording() {
		return
	}
	s.span.SetAttributes(AttrFile.String(name))
}

// TraceID is the span's trace id in hex, "" when not tracing: the audit
// line's trace_id.
func (s *Span) TraceID() string {
	if s == nil || !s.span.SpanContext().HasTraceID() {
		return ""
	}
	return s.span.SpanContext().TraceID().String()
}

// Duration is the time since the span started.
func (s *Span) Duration() time.Duration {
	if s == nil {
		return 0
	}
	return time.Since(s.start)
}

// End ends the span with o and records its operation-duration metric
// (server and client spans).
func (s *Span) End(o Outcome) {
	if s == nil {
		return
	}
	now := time.Now()
	et := o.errorType()
	if s.p.tracer != nil {
		if et != "" {
			s.span.SetAttributes(semconv.ErrorTypeKey.String(et))
		}
		if o.Err != nil {
			s.span.SetStatus(codes.Error, o.Err.Error())
		} else if o.IsError {
			s.span.SetStatus(codes.Error, ErrorTypeToolError)
		}
		s.span.End(trace.WithTimestamp(now))
	}
	if s.p.m != nil && (s.kind == kindServer || s.kind == kindClient) {
		s.p.m.operation(context.Background(), s.kind, s.op, et, now.Sub(s.start))
	}
}
