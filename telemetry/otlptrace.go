package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// spanExporter sends spans as OTLP/HTTP protobuf
// (ExportTraceServiceRequest) to {endpoint}/v1/traces.
type spanExporter struct{ c *otlpClient }

func (x *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return x.c.post(ctx, encodeSpans(spans))
}

func (x *spanExporter) Shutdown(context.Context) error {
	x.c.shutdown()
	return nil
}

// OTLP's span flags above the W3C trace flags: whether the parent is
// remote is known, and whether it is.
const (
	spanFlagsHasIsRemote = 0x100
	spanFlagsIsRemote    = 0x200
)

// encodeSpans is the ExportTraceServiceRequest of spans: one
// ResourceSpans per resource, one ScopeSpans per scope in it, in the
// order they first appear.
func encodeSpans(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		r attribute.Distinct
		s instrumentation.Scope
	}
	var (
		resources []attribute.Distinct
		byRes     = map[attribute.Distinct][]scopeKey{}
		byScope   = map[scopeKey][]sdktrace.ReadOnlySpan{}
	)
	for _, s := range spans {
		if s == nil {
			continue
		}
		k := scopeKey{s.Resource().Equivalent(), s.InstrumentationScope()}
		if _, ok := byRes[k.r]; !ok {
			resources = append(resources, k.r)
		}
		if _, ok := byScope[k]; !ok {
			byRes[k.r] = append(byRes[k.r], k)
		}
		byScope[k] = append(byScope[k], s)
	}
	if len(resources) == 0 {
		return nil
	}
	e := &pbuf{b: make([]byte, 0, 256*len(spans))}
	for _, r := range resources {
		keys := byRes[r]
		first := byScope[keys[0]][0]
		e.open(1) // ExportTraceServiceRequest.resource_spans
		e.resource(1, first.Resource())
		for _, k := range keys {
			e.open(2) // ResourceSpans.scope_spans
			e.scope(1, k.s)
			for _, s := range byScope[k] {
				e.span(2, s)
			}
			e.str(3, k.s.SchemaURL)
			e.close()
		}
		e.str(3, first.Resource().SchemaURL())
		e.close()
	}
	return e.b
}

// span: Span, field numbers as in opentelemetry/proto/trace/v1.
func (e *pbuf) span(f protowire.Number, s sdktrace.ReadOnlySpan) {
	e.open(f)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.bytes(1, tid[:])
	e.bytes(2, sid[:])
	e.str(3, sc.TraceState().String())
	if p := s.Parent(); p.SpanID().IsValid() {
		psid := p.SpanID()
		e.bytes(4, psid[:])
	}
	e.str(5, s.Name())
	e.uvarint(6, uint64(otlpSpanKind(s.SpanKind())))
	e.fixed64(7, unixNano(s.StartTime().UnixNano()))
	e.fixed64(8, unixNano(s.EndTime().UnixNano()))
	e.keyValues(9, s.Attributes())
	e.uvarint(10, clampUint32(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		e.open(11) // Span.Event
		e.fixed64(1, unixNano(ev.Time.UnixNano()))
		e.str(2, ev.Name)
		e.keyValues(3, ev.Attributes)
		e.uvarint(4, clampUint32(ev.DroppedAttributeCount))
		e.close()
	}
	e.uvarint(12, clampUint32(s.DroppedEvents()))
	for _, l := range s.Links() {
		e.open(13) // Span.Link
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		e.bytes(1, ltid[:])
		e.bytes(2, lsid[:])
		e.keyValues(4, l.Attributes)
		e.uvarint(5, clampUint32(l.DroppedAttributeCount))
		e.fixed32(6, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		e.close()
	}
	e.uvarint(14, clampUint32(s.DroppedLinks()))
	st := s.Status()
	e.open(15) // Status{message = 2, code = 3}, always present
	e.str(2, st.Description)
	e.uvarint(3, statusCode(st.Code))
	e.close()
	e.fixed32(16, spanFlags(sc.TraceFlags(), s.Parent()))
	e.close()
}

// spanFlags: the W3C flags, and whether the parent is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | spanFlagsHasIsRemote
	if parent.IsRemote() {
		f |= spanFlagsIsRemote
	}
	return f
}

// otlpSpanKind: OTLP numbers the kinds as the API does (internal 1, server
// 2, client 3, producer 4, consumer 5); anything else is unspecified.
func otlpSpanKind(k trace.SpanKind) trace.SpanKind {
	if k < trace.SpanKindInternal || k > trace.SpanKindConsumer {
		return trace.SpanKindUnspecified
	}
	return k
}

// statusCode: OTLP's STATUS_CODE_OK is 1 and ERROR 2, the API's the
// other way round.
func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	}
	return 0
}

// unixNano is a time as OTLP's fixed64, 0 before 1970.
func unixNano(ns int64) uint64 { return uint64(max(ns, 0)) }
