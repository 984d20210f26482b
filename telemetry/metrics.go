package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
)

// DurationBuckets are the histogram boundaries (seconds) of the operation
// and session durations: the conventions' MCP buckets, which stop at 300 s,
// extended to an hour, since a diverted listing or a sampling round trip
// can take minutes and a session hours.
var DurationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}

// Metric names of our own (the conventions name the durations).
const (
	MetricTokensDiverted  = "scratchpad.tokens.diverted"
	MetricTokensExtracted = "scratchpad.tokens.extracted"
	MetricTokensPassed    = "scratchpad.tokens.passed_through"
	MetricTokensCharged   = "scratchpad.tokens.charged"
	// MetricTokensByReference counts the tokens of stored outputs put in
	// tool calls' arguments by reference.
	MetricTokensByReference = "scratchpad.tokens.by_reference"
	MetricBudgetRemaining   = "scratchpad.budget.remaining"
	MetricRestarts          = "scratchpad.upstream.restarts"
	MetricRefusals          = "scratchpad.refusals"
	MetricSpansDropped      = "scratchpad.telemetry.spans.dropped"
	MetricAuditDropped      = "scratchpad.telemetry.audit.dropped"
)

// Label keys of our own metrics.
const (
	LabelServer = attribute.Key("server")
	LabelTool   = attribute.Key("tool")
	LabelOwner  = attribute.Key("owner")
	LabelAgent  = attribute.Key("agent")
	LabelKind   = attribute.Key("kind")
)

type instruments struct {
	server    mcpconv.ServerOperationDuration
	client    mcpconv.ClientOperationDuration
	session   mcpconv.ServerSessionDuration
	diverted  metric.Int64Counter
	extracted metric.Int64Counter
	passed    metric.Int64Counter
	charged   metric.Int64Counter
	byRef     metric.Int64Counter
	budget    metric.Int64Gauge
	restarts  metric.Int64Counter
	refusals  metric.Int64Counter

	servers, tools, owners, agents, kinds *bounded
}

func newInstruments(p *Provider) (*instruments, error) {
	m := p.mp.Meter(scopeName, metric.WithSchemaURL(semconv.SchemaURL))
	in := &instruments{servers: newBounded(maxServers), tools: newBounded(maxTools), owners: newBounded(maxOwners),
		agents: newBounded(maxAgents), kinds: newBounded(maxKinds)}
	var err error
	b := metric.WithExplicitBucketBoundaries(DurationBuckets...)
	check := func(e error) {
		if err == nil {
			err = e
		}
	}
	var e error
	in.server, e = mcpconv.NewServerOperationDuration(m, b)
	check(e)
	in.client, e = mcpconv.NewClientOperationDuration(m, b)
	check(e)
	in.session, e = mcpconv.NewServerSessionDuration(m, b)
	check(e)
	counter := func(name, desc string) metric.Int64Counter {
		c, e := m.Int64Counter(name, metric.WithUnit("{token}"), metric.WithDescription(desc))
		check(e)
		return c
	}
	in.diverted = counter(MetricTokensDiverted, "Tokens of results stored instead of returned: kept out of the context.")
	in.extracted = counter(MetricTokensExtracted, "Tokens returned by exploration calls over stored results.")
	in.passed = counter(MetricTokensPassed, "Tokens of results returned unchanged, under their threshold.")
	in.charged = counter(MetricTokensCharged, "Tokens charged to agents' context budgets.")
	in.byRef = counter(MetricTokensByReference, "Tokens of stored outputs handed to tools by reference: never in the context.")
	in.budget, e = m.Int64Gauge(MetricBudgetRemaining, metric.WithUnit("{token}"), metric.WithDescription("An agent's context budget left."))
	check(e)
	in.restarts, e = m.Int64Counter(MetricRestarts, metric.WithUnit("{restart}"), metric.WithDescription("Upstream server restarts."))
	check(e)
	in.refusals, e = m.Int64Counter(MetricRefusals, metric.WithUnit("{call}"), metric.WithDescription("Calls refused, by kind (budget, quota, rate, auth, …)."))
	check(e)
	_, e = m.Int64ObservableCounter(MetricSpansDropped, metric.WithUnit("{span}"),
		metric.WithDescription("Spans dropped because the exporter did not keep up."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error { o.Observe(p.DroppedSpans()); return nil }))
	check(e)
	_, e = m.Int64ObservableCounter(MetricAuditDropped, metric.WithUnit("{line}"),
		metric.WithDescription("Audit lines dropped because the writer did not keep up."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error { o.Observe(p.DroppedAudit()); return nil }))
	check(e)
	return in, err
}

func (in *instruments) operation(ctx context.Context, kind spanKind, op Op, errorType string, d time.Duration) {
	attrs := make([]attribute.KeyValue, 0, 6)
	if op.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(op.ProtocolVersion))
	}
	if op.Method == "tools/call" && op.Target != "" {
		attrs = append(attrs, semconv.GenAIToolName(in.tools.value(op.Target)))
	}
	if errorType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(in.kinds.value(errorType)))
	}
	if op.Server != "" {
		attrs = append(attrs, LabelServer.String(in.servers.value(op.Server)))
	}
	if op.Owner != "" {
		attrs = append(attrs, LabelOwner.String(in.owners.value(op.Owner)))
	}
	method := mcpconv.MethodNameAttr(op.Method)
	if kind == kindServer {
		in.server.Record(ctx, d.Seconds(), method, attrs...)
	} else {
		in.client.Record(ctx, d.Seconds(), method, attrs...)
	}
}

// Usage is one call's token figures by server and tool, for
// [Provider.RecordTokens]. Zero fields record nothing.
type Usage struct {
	Server, Tool, Owner string
	Diverted            int // stored instead of returned
	Extracted           int // returned by an exploration call
	PassedThrough       int // returned unchanged
	Charged             int // charged to the budget
	ByReference         int // of stored outputs put in the call's arguments by reference
}

// RecordTokens adds u's figures to the token counters.
func (p *Provider) RecordTokens(ctx context.Context, u Usage) {
	if p == nil || p.m == nil {
		return
	}
	in := p.m
	set := metric.WithAttributeSet(attribute.NewSet(
		LabelServer.String(in.servers.value(u.Server)), LabelTool.String(in.tools.value(u.Tool)), LabelOwner.String(in.owners.value(u.Owner))))
	for _, x := range []struct {
		c metric.Int64Counter
		n int
	}{{in.diverted, u.Diverted}, {in.extracted, u.Extracted}, {in.passed, u.PassedThrough}, {in.charged, u.Charged}, {in.byRef, u.ByReference}} {
		if x.n > 0 {
			x.c.Add(ctx, int64(x.n), set)
		}
	}
}

// BudgetRemaining sets agent's budget left (owner's agent; agent names
// are capped, the rest counted as [OtherLabel]).
func (p *Provider) BudgetRemaining(ctx context.Context, owner, agent string, left int) {
	if p == nil || p.m == nil {
		return
	}
	p.m.budget.Record(ctx, int64(left), metric.WithAttributes(LabelOwner.String(p.m.owners.value(owner)), LabelAgent.String(p.m.agents.value(agent))))
}

// UpstreamRestarted counts one restart of upstream server.
func (p *Provider) UpstreamRestarted(ctx context.Context, server string) {
	if p == nil || p.m == nil {
		return
	}
	p.m.restarts.Add(ctx, 1, metric.WithAttributes(LabelServer.String(p.m.servers.value(server))))
}

// Refused counts one call refused for kind (a short code: "budget",
// "quota", "rate", "auth", "too_large", …).
func (p *Provider) Refused(ctx context.Context, kind, owner string) {
	if p == nil || p.m == nil {
		return
	}
	p.m.refusals.Add(ctx, 1, metric.WithAttributes(LabelKind.String(p.m.kinds.value(kind)), LabelOwner.String(p.m.owners.value(owner))))
}

// SessionEnded records the duration of one MCP session
// (mcp.server.session.duration).
func (p *Provider) SessionEnded(ctx context.Context, d time.Duration, protocolVersion string) {
	if p == nil || p.m == nil {
		return
	}
	var attrs []attribute.KeyValue
	if protocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(protocolVersion))
	}
	p.m.session.Record(ctx, d.Seconds(), attrs...)
}
