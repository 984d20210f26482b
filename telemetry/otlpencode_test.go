package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// The OpenTelemetry exporters are test dependencies only: the reference
// our hand-written encoding must equal, message for message, while the
// binary links neither them nor the protobuf types (TestBinaryDeps in
// cmd/scratchpad-mcp).

// bodies is an OTLP/HTTP endpoint that keeps each request body.
type bodies struct {
	srv *httptest.Server
	mu  sync.Mutex
	got [][]byte
}

func newBodies(t *testing.T) *bodies {
	b := &bodies{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.got = append(b.got, body)
		b.mu.Unlock()
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *bodies) last(t *testing.T) []byte {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.got) == 0 {
		t.Fatal("the reference exporter sent nothing")
	}
	return b.got[len(b.got)-1]
}

var (
	tid1   = trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid1   = trace.SpanID{1, 1, 1, 1, 1, 1, 1, 2}
	sid2   = trace.SpanID{2, 2, 2, 2, 2, 2, 2, 3}
	ts, _  = trace.ParseTraceState("vendor=x,other=y")
	t0     = time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.UTC)
	allKVs = []attribute.KeyValue{
		attribute.String("s", "text"), attribute.String("empty", ""),
		attribute.Bool("b", true), attribute.Bool("f", false),
		attribute.Int64("i", -42), attribute.Int64("zero", 0),
		attribute.Float64("d", 2.5), attribute.Float64("negzero", 0),
		attribute.StringSlice("ss", []string{"a", ""}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, -1, 0}), attribute.Float64Slice("ds", []float64{0.5}),
		attribute.StringSlice("none", []string{}),
	}
)

// spanStubs are spans that use every field an OTLP span has: every
// attribute type, events, links, both statuses, a remote and a local
// parent, every kind, dropped counts, two scopes and two resources.
func spanStubs() []sdktrace.ReadOnlySpan {
	r1 := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.41.0", attribute.String("service.name", "sp"), attribute.String("service.version", "v1"))
	r2 := resource.NewSchemaless(attribute.String("service.name", "other"))
	scopeA := instrumentation.Scope{Name: "a", Version: "1", SchemaURL: "https://opentelemetry.io/schemas/1.41.0"}
	scopeB := instrumentation.Scope{Name: "b", Attributes: attribute.NewSet(attribute.String("k", "v"))}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid1, SpanID: sid2, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	var out []sdktrace.ReadOnlySpan
	for i, k := range []trace.SpanKind{trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindInternal, trace.SpanKindProducer, trace.SpanKindConsumer, trace.SpanKindUnspecified} {
		s := tracetest.SpanStub{
			Name:                 "span " + string(rune('a'+i)),
			SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid1, SpanID: trace.SpanID{byte(i + 1), 9, 9, 9, 9, 9, 9, 9}, TraceFlags: trace.FlagsSampled, TraceState: ts}),
			SpanKind:             k,
			StartTime:            t0,
			EndTime:              t0.Add(time.Duration(i+1) * time.Millisecond),
			Attributes:           allKVs,
			Resource:             r1,
			InstrumentationScope: scopeA,
		}
		switch i {
		case 0:
			s.Parent = remote
			s.Status = sdktrace.Status{Code: codes.Error, Description: "boom"}
			s.Events = []sdktrace.Event{{Name: "ev", Time: t0.Add(time.Microsecond), Attributes: allKVs[:3], DroppedAttributeCount: 2}, {Name: "bare", Time: t0}}
			s.Links = []sdktrace.Link{{SpanContext: remote, Attributes: allKVs[4:6], DroppedAttributeCount: 1}}
			s.DroppedAttributes, s.DroppedEvents, s.DroppedLinks = 3, 4, 5
		case 1:
			s.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid1, SpanID: sid1, TraceFlags: trace.FlagsSampled})
			s.Status = sdktrace.Status{Code: codes.Ok}
			s.InstrumentationScope = scopeB
		case 2:
			s.Resource = r2
			s.Attributes = nil
		case 3:
			s.InstrumentationScope = scopeB
			s.Resource = r2
		}
		out = append(out, s.Snapshot())
	}
	return out
}

// serviceOf is a resource's service.name.
func serviceOf(r *resourcepb.Resource) string {
	for _, a := range r.GetAttributes() {
		if a.Key == "service.name" {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

// decodeTraces reads a request, its resources ordered by service name:
// the reference exporter groups them through a map.
func decodeTraces(t *testing.T, b []byte) *coltrace.ExportTraceServiceRequest {
	t.Helper()
	var req coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatalf("not an ExportTraceServiceRequest: %v", err)
	}
	slices.SortFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int {
		return strings.Compare(serviceOf(a.Resource), serviceOf(b.Resource))
	})
	return &req
}

// TestSpansEncodeAsTheOTelExporter: the request our encoder writes is the
// one OpenTelemetry's OTLP/HTTP exporter sends for the same spans.
func TestSpansEncodeAsTheOTelExporter(t *testing.T) {
	spans := spanStubs()
	ref := newBodies(t)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(ref.srv.URL+"/v1/traces"), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	want := decodeTraces(t, ref.last(t))
	got := decodeTraces(t, encodeSpans(spans))
	sameMessage(t, want, got)
	if len(got.ResourceSpans) != 2 || len(got.ResourceSpans[0].ScopeSpans) != 2 {
		t.Fatalf("grouping: %d resources", len(got.ResourceSpans))
	}
	if encodeSpans(nil) != nil {
		t.Error("no spans gave a request")
	}
}

// sameMessage fails unless ours equals the reference exporter's message,
// printing both.
func sameMessage(t *testing.T, theirs, ours proto.Message) {
	t.Helper()
	if !proto.Equal(theirs, ours) {
		o := prototext.MarshalOptions{Multiline: true}
		t.Fatalf("our request differs from the OpenTelemetry exporter's\ntheirs:\n%s\nours:\n%s", o.Format(theirs), o.Format(ours))
	}
}

// metricData uses every aggregation and field the SDK can hand an
// exporter: gauges, sums (both temporalities), explicit and exponential
// histograms with and without min/max, exemplars, a summary.
func metricData() *metricdata.ResourceMetrics {
	set := attribute.NewSet(attribute.String("server", "k8s"), attribute.Int64("n", 3))
	none := attribute.NewSet()
	ex := []metricdata.Exemplar[int64]{{FilteredAttributes: allKVs[:2], Time: t0, Value: 7, SpanID: sid1[:], TraceID: tid1[:]}}
	exf := []metricdata.Exemplar[float64]{{Time: t0, Value: 0.25}}
	return &metricdata.ResourceMetrics{
		Resource: resource.NewWithAttributes("https://opentelemetry.io/schemas/1.41.0", attribute.String("service.name", "sp")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: scopeName, Version: "v1", SchemaURL: "https://opentelemetry.io/schemas/1.41.0"},
			Metrics: []metricdata.Metrics{
				{Name: "g.int", Description: "d", Unit: "{x}", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, Time: t0, Value: 0}, {Attributes: none, StartTime: t0, Time: t0, Value: -5, Exemplars: ex}}}},
				{Name: "g.float", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: set, Time: t0, Value: 0}, {Time: t0, Value: 1.5, Exemplars: exf}}}},
				{Name: "s.int", Unit: "{token}", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{{Attributes: set, StartTime: t0, Time: t0.Add(time.Second), Value: 48000}}}},
				{Name: "s.float", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.DataPoint[float64]{{StartTime: t0, Time: t0, Value: -0.5}}}},
				{Name: "h.float", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{
					{Attributes: set, StartTime: t0, Time: t0, Count: 3, Bounds: DurationBuckets, BucketCounts: make([]uint64, len(DurationBuckets)+1), Min: metricdata.NewExtrema(0.001), Max: metricdata.NewExtrema(42.0), Sum: 42.5, Exemplars: exf},
					{StartTime: t0, Time: t0, Count: 0, Bounds: []float64{1}, BucketCounts: []uint64{0, 0}},
				}}},
				{Name: "h.int", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{
					{Time: t0, Count: 2, Bounds: []float64{1, 10}, BucketCounts: []uint64{1, 0, 1}, Min: metricdata.NewExtrema[int64](0), Max: metricdata.NewExtrema[int64](11), Sum: 11, Exemplars: ex},
				}}},
				{Name: "e.float", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{
					{Attributes: set, StartTime: t0, Time: t0, Count: 5, Sum: 9.5, Scale: -3, ZeroCount: 1, ZeroThreshold: 0.001,
						PositiveBucket: metricdata.ExponentialBucket{Offset: -2, Counts: []uint64{1, 0, 300}}, NegativeBucket: metricdata.ExponentialBucket{Offset: 4, Counts: []uint64{2}},
						Min: metricdata.NewExtrema(-1.0), Max: metricdata.NewExtrema(8.0), Exemplars: exf},
				}}},
				{Name: "e.int", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{Time: t0, Scale: 2}}}},
				{Name: "summary", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{Attributes: set, StartTime: t0, Time: t0, Count: 4, Sum: 10,
					QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 1}, {Quantile: 0.5, Value: 2.5}, {Quantile: 1, Value: 4}}}}}},
			},
		}, {Scope: instrumentation.Scope{Name: "empty"}}},
	}
}

// TestMetricsEncodeAsTheOTelExporter: the metrics request our encoder
// writes is the one OpenTelemetry's OTLP/HTTP exporter sends.
func TestMetricsEncodeAsTheOTelExporter(t *testing.T) {
	rm := metricData()
	ref := newBodies(t)
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(ref.srv.URL+"/v1/metrics"), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Export(context.Background(), rm); err != nil {
		t.Fatal(err)
	}
	var want, got colmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(ref.last(t), &want); err != nil {
		t.Fatal(err)
	}
	body, err := encodeMetrics(rm)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Unmarshal(body, &got); err != nil {
		t.Fatalf("not an ExportMetricsServiceRequest: %v", err)
	}
	sameMessage(t, &want, &got)
	if b, err := encodeMetrics(&metricdata.ResourceMetrics{}); b != nil || err != nil {
		t.Errorf("no scope: %v, %v", b, err)
	}
}

// TestMetricsBadAggregationLeftOut: a sum of unknown temporality is left
// out and named in the error; the metrics around it are still encoded.
func TestMetricsBadAggregationLeftOut(t *testing.T) {
	rm := metricData()
	ms := rm.ScopeMetrics[0].Metrics
	bad := metricdata.Metrics{Name: "bad.sum", Data: metricdata.Sum[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}}
	rm.ScopeMetrics[0].Metrics = append([]metricdata.Metrics{ms[0], bad}, ms[1:]...)
	body, err := encodeMetrics(rm)
	if err == nil || !strings.Contains(err.Error(), "bad.sum") {
		t.Fatalf("error %v, want one naming bad.sum", err)
	}
	var got colmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got.ResourceMetrics[0].ScopeMetrics[0].Metrics {
		names = append(names, m.Name)
	}
	if len(names) != len(ms) || slices.Contains(names, "bad.sum") {
		t.Fatalf("metrics sent: %v", names)
	}
}

var _ sdkmetric.Exporter = (*metricExporter)(nil)
var _ sdktrace.SpanExporter = (*spanExporter)(nil)
