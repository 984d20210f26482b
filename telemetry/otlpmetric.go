package telemetry

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/encoding/protowire"
)

// metricExporter sends metrics as OTLP/HTTP protobuf
// (ExportMetricsServiceRequest) to {endpoint}/v1/metrics, for the SDK's
// PeriodicReader.
type metricExporter struct {
	c           *otlpClient
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
}

// newMetricSelectors reads OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
// and OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION as the
// OpenTelemetry exporter did; a value it did not know is ignored, as it
// was there.
func newMetricSelectors(env func(string) string) (sdkmetric.TemporalitySelector, sdkmetric.AggregationSelector) {
	t := sdkmetric.DefaultTemporalitySelector
	switch strings.ToLower(env("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE")) {
	case "delta":
		t = sdkmetric.DeltaTemporalitySelector
	case "lowmemory":
		t = sdkmetric.LowMemoryTemporalitySelector
	}
	a := sdkmetric.DefaultAggregationSelector
	if strings.EqualFold(env("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"), "base2_exponential_bucket_histogram") {
		a = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}
	}
	return t, a
}

func (x *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return x.temporality(k)
}

func (x *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return x.aggregation(k)
}

func (x *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	body, err := encodeMetrics(rm)
	if body != nil {
		if perr := x.c.post(ctx, body); perr != nil {
			return perr
		}
	}
	return err
}

func (x *metricExporter) ForceFlush(context.Context) error { return nil }

func (x *metricExporter) Shutdown(context.Context) error {
	x.c.shutdown()
	return nil
}

// encodeMetrics is the ExportMetricsServiceRequest of rm. A metric of an
// aggregation it does not know, or of an unknown temporality, is left out
// and named in the error; the rest is sent. Nil when rm holds no scope.
func encodeMetrics(rm *metricdata.ResourceMetrics) ([]byte, error) {
	if len(rm.ScopeMetrics) == 0 {
		return nil, nil
	}
	var bad []string
	e := &pbuf{b: make([]byte, 0, 4096)}
	e.open(1) // ExportMetricsServiceRequest.resource_metrics
	e.resource(1, rm.Resource)
	for _, sm := range rm.ScopeMetrics {
		e.open(2) // ResourceMetrics.scope_metrics
		e.scope(1, sm.Scope)
		for _, m := range sm.Metrics {
			mark := len(e.b)
			if err := e.metric(2, m); err != nil {
				e.b, e.stack = e.b[:mark], e.stack[:len(e.stack)-1]
				bad = append(bad, fmt.Sprintf("%s: %v", m.Name, err))
			}
		}
		e.str(3, sm.Scope.SchemaURL)
		e.close()
	}
	if rm.Resource != nil {
		e.str(3, rm.Resource.SchemaURL())
	}
	e.close()
	if len(bad) > 0 {
		return e.b, fmt.Errorf("telemetry: metrics not exported: %s", strings.Join(bad, "; "))
	}
	return e.b, nil
}

// metric: Metric{name = 1, description = 2, unit = 3, oneof gauge = 5,
// sum = 7, histogram = 9, exponential_histogram = 10, summary = 11}. On
// an error the message is left open: the caller cuts it off.
func (e *pbuf) metric(f protowire.Number, m metricdata.Metrics) error {
	e.open(f)
	e.str(1, m.Name)
	e.str(2, m.Description)
	e.str(3, m.Unit)
	var err error
	switch a := m.Data.(type) {
	case metricdata.Gauge[int64]:
		gauge(e, a)
	case metricdata.Gauge[float64]:
		gauge(e, a)
	case metricdata.Sum[int64]:
		err = sum(e, a)
	case metricdata.Sum[float64]:
		err = sum(e, a)
	case metricdata.Histogram[int64]:
		err = histogram(e, a)
	case metricdata.Histogram[float64]:
		err = histogram(e, a)
	case metricdata.ExponentialHistogram[int64]:
		err = expHistogram(e, a)
	case metricdata.ExponentialHistogram[float64]:
		err = expHistogram(e, a)
	case metricdata.Summary:
		summary(e, a)
	default:
		err = fmt.Errorf("unknown aggregation %T", a)
	}
	if err != nil {
		return err
	}
	e.close()
	return nil
}

// temporality: OTLP's DELTA is 1 and CUMULATIVE 2, the SDK's the other
// way round.
func temporality(t metricdata.Temporality) (uint64, error) {
	switch t {
	case metricdata.DeltaTemporality:
		return 1, nil
	case metricdata.CumulativeTemporality:
		return 2, nil
	}
	return 0, fmt.Errorf("unknown temporality %s", t)
}

func gauge[N int64 | float64](e *pbuf, g metricdata.Gauge[N]) {
	e.open(5)
	numberPoints(e, g.DataPoints)
	e.close()
}

func sum[N int64 | float64](e *pbuf, s metricdata.Sum[N]) error {
	t, err := temporality(s.Temporality)
	if err != nil {
		return err
	}
	e.open(7) // Sum{data_points = 1, aggregation_temporality = 2, is_monotonic = 3}
	numberPoints(e, s.DataPoints)
	e.uvarint(2, t)
	e.uvarint(3, protowire.EncodeBool(s.IsMonotonic))
	e.close()
	return nil
}

// numberPoints: repeated NumberDataPoint{start_time_unix_nano = 2,
// time_unix_nano = 3, oneof as_double = 4, as_int = 6 (sfixed64),
// exemplars = 5, attributes = 7} as field 1.
func numberPoints[N int64 | float64](e *pbuf, pts []metricdata.DataPoint[N]) {
	for _, p := range pts {
		e.open(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		number(e, 4, 6, p.Value)
		exemplars(e, 5, p.Exemplars)
		e.attrSet(7, p.Attributes)
		e.close()
	}
}

// number writes v as the double field fd or the sfixed64 field fi of a
// oneof (always, zero included).
func number[N int64 | float64](e *pbuf, fd, fi protowire.Number, v N) {
	switch x := any(v).(type) {
	case int64:
		e.fixed64Always(fi, uint64(x))
	case float64:
		e.doubleAlways(fd, x)
	}
}

// exemplars: repeated Exemplar{time_unix_nano = 2, oneof as_double = 3,
// as_int = 6, span_id = 4, trace_id = 5, filtered_attributes = 7}.
func exemplars[N int64 | float64](e *pbuf, f protowire.Number, xs []metricdata.Exemplar[N]) {
	for _, x := range xs {
		e.open(f)
		e.fixed64(2, timeNano(x.Time))
		number(e, 3, 6, x.Value)
		e.bytes(4, x.SpanID)
		e.bytes(5, x.TraceID)
		e.keyValues(7, x.FilteredAttributes)
		e.close()
	}
}

func histogram[N int64 | float64](e *pbuf, h metricdata.Histogram[N]) error {
	t, err := temporality(h.Temporality)
	if err != nil {
		return err
	}
	e.open(9) // Histogram{data_points = 1, aggregation_temporality = 2}
	for _, p := range h.DataPoints {
		// HistogramDataPoint{start = 2, time = 3, count = 4, optional sum = 5,
		// bucket_counts = 6, explicit_bounds = 7, exemplars = 8,
		// attributes = 9, optional min = 11, optional max = 12}
		e.open(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		e.doubleAlways(5, float64(p.Sum))
		e.packedFixed64(6, p.BucketCounts)
		e.packedDouble(7, p.Bounds)
		exemplars(e, 8, p.Exemplars)
		e.attrSet(9, p.Attributes)
		if v, ok := p.Min.Value(); ok {
			e.doubleAlways(11, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.doubleAlways(12, float64(v))
		}
		e.close()
	}
	e.uvarint(2, t)
	e.close()
	return nil
}

func expHistogram[N int64 | float64](e *pbuf, h metricdata.ExponentialHistogram[N]) error {
	t, err := temporality(h.Temporality)
	if err != nil {
		return err
	}
	e.open(10) // ExponentialHistogram{data_points = 1, aggregation_temporality = 2}
	for _, p := range h.DataPoints {
		// ExponentialHistogramDataPoint{attributes = 1, start = 2, time = 3,
		// count = 4, optional sum = 5, scale = 6 (sint32), zero_count = 7,
		// positive = 8, negative = 9, exemplars = 11, optional min = 12,
		// optional max = 13, zero_threshold = 14}
		e.open(1)
		e.attrSet(1, p.Attributes)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		e.doubleAlways(5, float64(p.Sum))
		e.sint32(6, p.Scale)
		e.fixed64(7, p.ZeroCount)
		for _, b := range []struct {
			f protowire.Number
			b metricdata.ExponentialBucket
		}{{8, p.PositiveBucket}, {9, p.NegativeBucket}} {
			e.open(b.f) // Buckets{offset = 1 (sint32), bucket_counts = 2}
			e.sint32(1, b.b.Offset)
			e.packedUvarint(2, b.b.Counts)
			e.close()
		}
		exemplars(e, 11, p.Exemplars)
		if v, ok := p.Min.Value(); ok {
			e.doubleAlways(12, float64(v))
		}
		if v, ok := p.Max.Value(); ok {
			e.doubleAlways(13, float64(v))
		}
		e.double(14, p.ZeroThreshold)
		e.close()
	}
	e.uvarint(2, t)
	e.close()
	return nil
}

func summary(e *pbuf, s metricdata.Summary) {
	e.open(11) // Summary{data_points = 1}
	for _, p := range s.DataPoints {
		// SummaryDataPoint{start = 2, time = 3, count = 4, sum = 5,
		// quantile_values = 6, attributes = 7}
		e.open(1)
		e.fixed64(2, timeNano(p.StartTime))
		e.fixed64(3, timeNano(p.Time))
		e.fixed64(4, p.Count)
		e.double(5, p.Sum)
		for _, q := range p.QuantileValues {
			e.open(6) // ValueAtQuantile{quantile = 1, value = 2}
			e.double(1, q.Quantile)
			e.double(2, q.Value)
			e.close()
		}
		e.attrSet(7, p.Attributes)
		e.close()
	}
	e.close()
}

// timeNano is t as OTLP's fixed64: 0 for the zero time.
func timeNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return unixNano(t.UnixNano())
}
