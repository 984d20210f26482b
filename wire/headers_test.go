package wire

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
)

// TestHeaderValueEncoding is the SEP-2243 encoding table: plain printable
// ASCII as is, anything else (and the sentinel itself) base64 in
// "=?base64?…?=".
func TestHeaderValueEncoding(t *testing.T) {
	for _, tc := range []struct{ in, wire string }{
		{"us-west1", "us-west1"},
		{"", ""},
		{"a b", "a b"},
		{"Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="},
		{" padded ", "=?base64?IHBhZGRlZCA=?="},
		{"\ttab", "=?base64?CXRhYg==?="},
		{"line1\nline2", "=?base64?bGluZTEKbGluZTI=?="},
		{"café", "=?base64?Y2Fmw6k=?="},
		{"=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="},
	} {
		if got := EncodeHeaderValue(tc.in); got != tc.wire {
			t.Errorf("Encode(%q) = %q, want %q", tc.in, got, tc.wire)
		}
		if got, ok := DecodeHeaderValue(tc.wire); !ok || got != tc.in {
			t.Errorf("Decode(%q) = %q, %v, want %q", tc.wire, got, ok, tc.in)
		}
	}
	for _, bad := range []string{"=?base64?SGVsbG8?=", "=?base64?SGV*bG8=?=", "=?base64?SGVsbG8===?=", "=?base64?SGVs bG8=?=", "=?base64?SGVsbG8-?="} {
		if _, ok := DecodeHeaderValue(bad); ok {
			t.Errorf("Decode(%q) accepted bad base64", bad)
		}
	}
	// Without the whole wrapper a value is literal.
	if got, ok := DecodeHeaderValue("=?base64?abc"); !ok || got != "=?base64?abc" {
		t.Errorf("no-sentinel literal: %q %v", got, ok)
	}
}

var schema = json.RawMessage(`{"type":"object","properties":{
	"region":{"type":"string","x-mcp-header":"Region"},
	"count":{"type":"integer","x-mcp-header":"Count"},
	"dry":{"type":"boolean","x-mcp-header":"Dry"},
	"opts":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
	"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}},
	"alt":{"oneOf":[{"type":"string","x-mcp-header":"Alt"}]}}}`)

func TestParamBindings(t *testing.T) {
	bs, err := ParamBindings(schema)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, b := range bs {
		got[b.Header] = b.Path[len(b.Path)-1]
	}
	// Item and Alt are not reachable through properties: they bind nothing.
	want := map[string]string{"Region": "region", "Count": "count", "Dry": "dry", "Zone": "zone"}
	if len(got) != len(want) {
		t.Fatalf("bindings %v, want %v", got, want)
	}
	for h, p := range want {
		if got[h] != p {
			t.Fatalf("bindings %v, want %v", got, want)
		}
	}
	for name, s := range map[string]string{
		"number type":      `{"properties":{"a":{"type":"number","x-mcp-header":"A"}}}`,
		"object type":      `{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`,
		"array type":       `{"properties":{"a":{"type":"array","x-mcp-header":"A"}}}`,
		"no type":          `{"properties":{"a":{"x-mcp-header":"A"}}}`,
		"empty name":       `{"properties":{"a":{"type":"string","x-mcp-header":""}}}`,
		"name not a token": `{"properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`,
		"name not string":  `{"properties":{"a":{"type":"string","x-mcp-header":1}}}`,
		"duplicate case":   `{"properties":{"a":{"type":"string","x-mcp-header":"Tag"},"b":{"type":"object","properties":{"c":{"type":"string","x-mcp-header":"tag"}}}}}`,
	} {
		if _, err := ParamBindings(json.RawMessage(s)); !errors.Is(err, ErrInvalidBinding) {
			t.Errorf("%s: err %v, want ErrInvalidBinding", name, err)
		}
	}
	if bs, err := ParamBindings(nil); err != nil || bs != nil {
		t.Errorf("no schema: %v %v", bs, err)
	}
}

// TestCheckHeaders lifts http-header-validation and
// http-custom-header-server-validation (all -32020, HTTP 400).
func TestCheckHeaders(t *testing.T) {
	bs, err := ParamBindings(schema)
	if err != nil {
		t.Fatal(err)
	}
	call := `{"name":"deploy","arguments":{"region":"us-west1","count":42,"dry":false,"opts":{"zone":"b"}}}`
	std := func() http.Header {
		return http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"deploy"}, "Mcp-Param-Region": {"us-west1"},
			"Mcp-Param-Count": {"42"}, "Mcp-Param-Dry": {"false"}, "Mcp-Param-Zone": {"b"}}
	}
	with := func(edit func(http.Header)) http.Header { h := std(); edit(h); return h }
	for _, tc := range []struct {
		name   string
		method string
		params string
		h      http.Header
		ok     bool
	}{
		{"all agree", "tools/call", call, std(), true},
		{"whitespace around values", "tools/call", call, with(func(h http.Header) {
			h["Mcp-Method"] = []string{"  tools/call "}
			h["Mcp-Name"] = []string{"\tdeploy "}
		}), true},
		{"header name case-insensitive", "tools/call", call, with(func(h http.Header) { delete(h, "Mcp-Method"); h.Set("mcp-method", "tools/call") }), true},
		{"method missing", "tools/call", call, with(func(h http.Header) { h.Del("Mcp-Method") }), false},
		{"method mismatch", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Method", "tools/list") }), false},
		{"method value case-sensitive", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Method", "TOOLS/CALL") }), false},
		{"name missing", "tools/call", call, with(func(h http.Header) { h.Del("Mcp-Name") }), false},
		{"name mismatch", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Name", "other") }), false},
		{"name base64", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Name", "=?base64?ZGVwbG95?=") }), true},
		{"name bad base64", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Name", "=?base64?ZGVwbG9?=") }), false},
		{"integer compares numerically", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Count", "42.0") }), true},
		{"integer differs", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Count", "43") }), false},
		{"integer not a number", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Count", "forty") }), false},
		{"boolean differs", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Dry", "true") }), false},
		{"param missing", "tools/call", call, with(func(h http.Header) { h.Del("Mcp-Param-Region") }), false},
		{"nested param missing", "tools/call", call, with(func(h http.Header) { h.Del("Mcp-Param-Zone") }), false},
		{"param value case-sensitive", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Region", "US-WEST1") }), false},
		{"param base64", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?dXMtd2VzdDE=?=") }), true},
		{"param bad base64", "tools/call", call, with(func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?dXMtd2VzdDE?=") }), false},
		{"header for absent argument", "tools/call", `{"name":"deploy","arguments":{"count":42,"dry":false,"opts":{"zone":"b"}}}`, std(), false},
		{"header for null argument", "tools/call", `{"name":"deploy","arguments":{"region":null,"count":42,"dry":false,"opts":{"zone":"b"}}}`, std(), false},
		{"absent argument, no header", "tools/call", `{"name":"deploy","arguments":{"count":42,"dry":false,"opts":{"zone":"b"}}}`, with(func(h http.Header) { h.Del("Mcp-Param-Region") }), true},
		{"resources/read uri", "resources/read", `{"uri":"file:///a b"}`, http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///a b"}}, true},
		{"resources/read uri mismatch", "resources/read", `{"uri":"file:///a"}`, http.Header{"Mcp-Method": {"resources/read"}, "Mcp-Name": {"file:///b"}}, false},
		{"body without name", "tools/call", `{"arguments":{}}`, http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"deploy"}}, false},
		{"body name not a string", "tools/call", `{"name":7}`, http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"7"}}, false},
		{"prompts/get needs name", "prompts/get", `{"name":"p"}`, http.Header{"Mcp-Method": {"prompts/get"}}, false},
		{"tools/list needs no name", "tools/list", `{}`, http.Header{"Mcp-Method": {"tools/list"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b []Binding
			if tc.method == "tools/call" {
				b = bs
			}
			err := CheckHeaders(tc.h, tc.method, json.RawMessage(tc.params), b)
			if tc.ok != (err == nil) || err != nil && (err.Code != CodeHeaderMismatch || err.Status != 400) {
				t.Fatalf("CheckHeaders = %+v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestHeadersForRoundTrip(t *testing.T) {
	bs, _ := ParamBindings(schema)
	p := json.RawMessage(`{"name":"dépl oy","arguments":{"region":" x ","count":7,"dry":true,"opts":{"zone":null}}}`)
	h := HeadersFor("tools/call", p, bs)
	if h.Get("Mcp-Name") != "=?base64?ZMOpcGwgb3k=?=" || h.Get("Mcp-Param-Count") != "7" || h.Get("Mcp-Param-Dry") != "true" ||
		h.Values("Mcp-Param-Zone") != nil {
		t.Fatalf("headers %v", h)
	}
	if err := CheckHeaders(h, "tools/call", p, bs); err != nil {
		t.Fatalf("own headers refused: %v", err)
	}
}
