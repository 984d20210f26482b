package telemetry

import (
	"math"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/protobuf/encoding/protowire"
)

// The OTLP common messages (opentelemetry/proto/common/v1 and
// resource/v1), written as the OpenTelemetry exporters' transform writes
// them.

// keyValues writes attrs as repeated KeyValue field f.
func (e *pbuf) keyValues(f protowire.Number, attrs []attribute.KeyValue) {
	for _, kv := range attrs {
		e.keyValue(f, kv)
	}
}

// attrSet writes a set's attributes as repeated KeyValue field f.
func (e *pbuf) attrSet(f protowire.Number, set attribute.Set) {
	for it := set.Iter(); it.Next(); {
		e.keyValue(f, it.Attribute())
	}
}

// keyValue: KeyValue{key = 1, value = 2}.
func (e *pbuf) keyValue(f protowire.Number, kv attribute.KeyValue) {
	e.open(f)
	e.str(1, string(kv.Key))
	e.anyValue(2, kv.Value)
	e.close()
}

// anyValue: AnyValue{oneof string_value = 1, bool_value = 2, int_value =
// 3, double_value = 4, array_value = 5, kvlist_value = 6, bytes_value =
// 7}. An EMPTY value is an AnyValue with nothing set.
func (e *pbuf) anyValue(f protowire.Number, v attribute.Value) {
	e.open(f)
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		e.uvarintAlways(2, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		e.uvarintAlways(3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.doubleAlways(4, v.AsFloat64())
	case attribute.STRING:
		e.strAlways(1, v.AsString())
	case attribute.BYTESLICE:
		e.bytesAlways(7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		array(e, 5, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		array(e, 5, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		array(e, 5, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		array(e, 5, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		array(e, 5, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		e.open(6) // KeyValueList{values = 1}
		e.keyValues(1, v.AsMap())
		e.close()
	default:
		e.strAlways(1, "INVALID")
	}
	e.close()
}

// array: ArrayValue{values = 1}, always present (an empty slice is an
// empty array, not no value).
func array[T any](e *pbuf, f protowire.Number, vs []T, value func(T) attribute.Value) {
	e.open(f)
	for _, x := range vs {
		e.anyValue(1, value(x))
	}
	e.close()
}

// resource: Resource{attributes = 1}, always present.
func (e *pbuf) resource(f protowire.Number, r *resource.Resource) {
	e.open(f)
	if r != nil {
		for it := r.Iter(); it.Next(); {
			e.keyValue(1, it.Attribute())
		}
	}
	e.close()
}

// scope: InstrumentationScope{name = 1, version = 2, attributes = 3},
// always present.
func (e *pbuf) scope(f protowire.Number, s instrumentation.Scope) {
	e.open(f)
	e.str(1, s.Name)
	e.str(2, s.Version)
	e.attrSet(3, s.Attributes)
	e.close()
}

// clampUint32 is a count as a uint32 field.
func clampUint32(v int) uint64 {
	return uint64(min(max(v, 0), math.MaxUint32))
}
