package tool

import (
	"bytes"
	"encoding/json"
)

// MarshalOrdered writes a JSON object of n members whose order is part of
// what the model reads (an answer's error first, its suggestions last):
// member(i) is the i-th key and value, the value as [MarshalNoEscape]
// writes it. Packages keep their own small member type for their
// literals and marshal it with this.
func MarshalOrdered(n int, member func(i int) (string, any)) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		k, v := member(i)
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := MarshalNoEscape(v)
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalNoEscape is json.Marshal without HTML escapes: paths and
// filters hold <, > and &, which a model should read as written.
func MarshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
