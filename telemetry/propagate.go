package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// metaCarrier reads W3C trace context out of params._meta (SEP-414):
// only string values of "traceparent" and "tracestate" count.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	out := make([]string, 0, 2)
	for _, k := range []string{"traceparent", "tracestate"} {
		if _, ok := m[k].(string); ok {
			out = append(out, k)
		}
	}
	return out
}

var _ propagation.TextMapCarrier = metaCarrier(nil)

// Inject writes the span of ctx as traceparent (and tracestate when there
// is one) into meta, the upstream request's params._meta, replacing what
// the client sent there: the upstream's parent is the proxy's client
// span. A nil meta or telemetry off leaves it alone; a ctx without a span
// writes nothing.
func (p *Provider) Inject(ctx context.Context, meta map[string]any) {
	if p == nil || p.tracer == nil || meta == nil {
		return
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	// The client's tracestate belongs to the client's span: ours carries
	// its own (inherited when the trace is the client's).
	delete(meta, "tracestate")
	p.propag.Inject(ctx, metaCarrier(meta))
}
