package telemetry

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// pbuf writes protobuf by hand: the OTLP messages are few and fixed, and
// the generated types with the protobuf runtime would add 1.7 MB to the
// binary (docs/performance.md, "Binary size"). Fields at their zero value
// are left out, as proto3 does; the oneof and optional fields, whose
// presence means something, have writers that always write.
type pbuf struct {
	b     []byte
	stack []int // start of each open message's content
}

// open starts the embedded message of field; [pbuf.close] ends it.
func (e *pbuf) open(field protowire.Number) {
	e.b = protowire.AppendTag(e.b, field, protowire.BytesType)
	e.stack = append(e.stack, len(e.b))
}

// close ends the innermost open message: its content moves up to make
// room for its length, known only now (a few copies per export, against
// sizing every message twice).
func (e *pbuf) close() {
	start := e.stack[len(e.stack)-1]
	e.stack = e.stack[:len(e.stack)-1]
	n := len(e.b) - start
	w := protowire.SizeVarint(uint64(n))
	e.b = append(e.b, make([]byte, w)...)
	copy(e.b[start+w:], e.b[start:start+n])
	protowire.AppendVarint(e.b[:start], uint64(n))
}

func (e *pbuf) str(f protowire.Number, s string) {
	if s != "" {
		e.strAlways(f, s)
	}
}

func (e *pbuf) strAlways(f protowire.Number, s string) {
	e.b = protowire.AppendTag(e.b, f, protowire.BytesType)
	e.b = protowire.AppendString(e.b, s)
}

func (e *pbuf) bytes(f protowire.Number, b []byte) {
	if len(b) > 0 {
		e.bytesAlways(f, b)
	}
}

func (e *pbuf) bytesAlways(f protowire.Number, b []byte) {
	e.b = protowire.AppendTag(e.b, f, protowire.BytesType)
	e.b = protowire.AppendBytes(e.b, b)
}

func (e *pbuf) uvarint(f protowire.Number, v uint64) {
	if v != 0 {
		e.uvarintAlways(f, v)
	}
}

func (e *pbuf) uvarintAlways(f protowire.Number, v uint64) {
	e.b = protowire.AppendTag(e.b, f, protowire.VarintType)
	e.b = protowire.AppendVarint(e.b, v)
}

// sint32 is a zigzag-encoded int32 (sint32 in the .proto).
func (e *pbuf) sint32(f protowire.Number, v int32) {
	if v != 0 {
		e.uvarintAlways(f, protowire.EncodeZigZag(int64(v)))
	}
}

func (e *pbuf) fixed64(f protowire.Number, v uint64) {
	if v != 0 {
		e.fixed64Always(f, v)
	}
}

func (e *pbuf) fixed64Always(f protowire.Number, v uint64) {
	e.b = protowire.AppendTag(e.b, f, protowire.Fixed64Type)
	e.b = protowire.AppendFixed64(e.b, v)
}

func (e *pbuf) fixed32(f protowire.Number, v uint32) {
	if v != 0 {
		e.b = protowire.AppendTag(e.b, f, protowire.Fixed32Type)
		e.b = protowire.AppendFixed32(e.b, v)
	}
}

func (e *pbuf) double(f protowire.Number, v float64) {
	e.fixed64(f, math.Float64bits(v)) // -0 has bits, and is written, as proto does
}

func (e *pbuf) doubleAlways(f protowire.Number, v float64) {
	e.fixed64Always(f, math.Float64bits(v))
}

// packedFixed64 is a repeated fixed64 or double field, packed as proto3
// packs them.
func (e *pbuf) packedFixed64(f protowire.Number, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, f, protowire.BytesType)
	e.b = protowire.AppendVarint(e.b, uint64(8*len(vs)))
	for _, v := range vs {
		e.b = protowire.AppendFixed64(e.b, v)
	}
}

func (e *pbuf) packedDouble(f protowire.Number, vs []float64) {
	if len(vs) == 0 {
		return
	}
	e.b = protowire.AppendTag(e.b, f, protowire.BytesType)
	e.b = protowire.AppendVarint(e.b, uint64(8*len(vs)))
	for _, v := range vs {
		e.b = protowire.AppendFixed64(e.b, math.Float64bits(v))
	}
}

func (e *pbuf) packedUvarint(f protowire.Number, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	e.b = protowire.AppendTag(e.b, f, protowire.BytesType)
	e.b = protowire.AppendVarint(e.b, uint64(n))
	for _, v := range vs {
		e.b = protowire.AppendVarint(e.b, v)
	}
}
