package wire

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
)

const caps = `"io.modelcontextprotocol/clientCapabilities"`

// params builds tools/call params with the given _meta members.
func params(meta string) json.RawMessage {
	return json.RawMessage(`{"name":"x","arguments":{},"_meta":{` + meta + `}}`)
}

const goodMeta = `"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:{}`

// TestParseEnvelope lifts the server-stateless envelope checks of the
// conformance suite (0.2.0-alpha.12) and go-sdk v1.8.0's validateRequestMeta.
func TestParseEnvelope(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params string
		code   int
		status int
	}{
		{"complete", string(params(goodMeta + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","progressToken":7`)), 0, 0},
		{"clientInfo optional", string(params(goodMeta)), 0, 0},
		{"no params", ``, CodeInvalidParams, 400},
		{"no _meta", `{"name":"x"}`, CodeInvalidParams, 400},
		{"_meta null", `{"_meta":null}`, CodeInvalidParams, 400},
		{"_meta not object", `{"_meta":[1]}`, CodeInvalidParams, 400},
		{"no protocolVersion", string(params(caps + `:{}`)), CodeInvalidParams, 400},
		{"protocolVersion number", string(params(`"io.modelcontextprotocol/protocolVersion":20260728,` + caps + `:{}`)), CodeInvalidParams, 400},
		{"protocolVersion empty", string(params(`"io.modelcontextprotocol/protocolVersion":"",` + caps + `:{}`)), CodeInvalidParams, 400},
		{"no clientCapabilities", string(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`)), CodeInvalidParams, 400},
		{"clientCapabilities null", string(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:null`)), CodeInvalidParams, 400},
		{"clientCapabilities string", string(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:"all"`)), CodeInvalidParams, 400},
		{"sampling not an object", string(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:{"sampling":true}`)), CodeInvalidParams, 400},
		{"extensions not an object", string(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:{"extensions":[]}`)), CodeInvalidParams, 400},
		{"clientInfo string", string(params(goodMeta + `,"io.modelcontextprotocol/clientInfo":"c"`)), CodeInvalidParams, 400},
		{"clientInfo without version", string(params(goodMeta + `,"io.modelcontextprotocol/clientInfo":{"name":"c"}`)), CodeInvalidParams, 400},
		{"logLevel number", string(params(goodMeta + `,"io.modelcontextprotocol/logLevel":3`)), CodeInvalidParams, 400},
		{"progressToken object", string(params(goodMeta + `,"progressToken":{}`)), CodeInvalidParams, 400},
		{"unknown date version", string(params(`"io.modelcontextprotocol/protocolVersion":"2099-01-01",` + caps + `:{}`)), CodeUnsupportedVersion, 400},
		{"unknown semver version", string(params(`"io.modelcontextprotocol/protocolVersion":"v999.0.0",` + caps + `:{}`)), CodeUnsupportedVersion, 400},
		// Malformed caps win over the version, as in go-sdk.
		{"unknown version, no caps", string(params(`"io.modelcontextprotocol/protocolVersion":"2099-01-01"`)), CodeInvalidParams, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseEnvelope(json.RawMessage(tc.params))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("ParseEnvelope: %v", err)
				}
				return
			}
			if err == nil || err.Code != tc.code || err.Status != tc.status {
				t.Fatalf("ParseEnvelope = %+v, want code %d status %d", err, tc.code, tc.status)
			}
		})
	}
}

func TestParseEnvelopeFields(t *testing.T) {
	env, err := ParseEnvelope(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps +
		`:{"sampling":{},"elicitation":{"url":{}},"roots":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"debug","progressToken":"p1"`))
	if err != nil {
		t.Fatal(err)
	}
	if env.Version != Revision20260728 || !env.Caps.Sampling || !env.Caps.Roots || env.Caps.Elicitation || !env.Caps.ElicitationURL ||
		env.LogLevel != "debug" || string(env.ProgressToken) != `"p1"` || string(env.ClientInfo) != `{"name":"c","version":"1"}` {
		t.Fatalf("envelope %+v", env)
	}
	if _, ok := env.Caps.Extensions["io.modelcontextprotocol/tasks"]; !ok {
		t.Fatalf("extensions %v", env.Caps.Extensions)
	}
	if env.Caps.Allows("elicitation/create") || !env.Caps.Allows("sampling/createMessage") || !env.Caps.Allows("roots/list") {
		t.Fatalf("Allows wrong for %+v", env.Caps)
	}
	env, _ = ParseEnvelope(params(`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `:{"elicitation":{}}`))
	if !env.Caps.Elicitation || env.Caps.ElicitationURL || env.LogLevel != "" || env.ProgressToken != nil {
		t.Fatalf("elicitation {} is form only, no log level: %+v", env)
	}
}

func TestUnsupportedVersionData(t *testing.T) {
	_, err := ParseEnvelope(params(`"io.modelcontextprotocol/protocolVersion":"v999.0.0",` + caps + `:{}`))
	var d struct {
		Supported []string
		Requested string
	}
	if err == nil || json.Unmarshal(err.Data, &d) != nil {
		t.Fatalf("err %v", err)
	}
	if d.Requested != "v999.0.0" || !slices.Equal(d.Supported, Served()) || d.Supported[0] != Revision20260728 {
		t.Fatalf("data %s", err.Data)
	}
}

func TestClassify(t *testing.T) {
	h := func(kv ...string) http.Header {
		hh := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			hh.Set(kv[i], kv[i+1])
		}
		return hh
	}
	legacyParams := `{"name":"x"}`
	for _, tc := range []struct {
		name   string
		h      http.Header
		params string
		era    Era
		code   int
	}{
		{"2025 with session header", h("Mcp-Protocol-Version", "2025-11-25"), legacyParams, Era2025, 0},
		{"2025 no header", h(), legacyParams, Era2025, 0},
		{"2026", h("Mcp-Protocol-Version", "2026-07-28"), string(params(goodMeta)), Era20260728, 0},
		{"2026 header with spaces", http.Header{"Mcp-Protocol-Version": {" 2026-07-28\t"}}, string(params(goodMeta)), Era20260728, 0},
		{"header 2026, no _meta", h("Mcp-Protocol-Version", "2026-07-28"), legacyParams, Era2025, CodeInvalidParams},
		{"header 2026, _meta without version", h("Mcp-Protocol-Version", "2026-07-28"), string(params(caps + `:{}`)), Era2025, CodeInvalidParams},
		{"_meta version, no header", h(), string(params(goodMeta)), Era2025, CodeHeaderMismatch},
		{"header differs from _meta", h("Mcp-Protocol-Version", "2025-11-25"), string(params(goodMeta)), Era2025, CodeHeaderMismatch},
		{"unknown version agreeing is modern (then -32022)", h("Mcp-Protocol-Version", "v999.0.0"),
			string(params(`"io.modelcontextprotocol/protocolVersion":"v999.0.0",` + caps + `:{}`)), Era20260728, 0},
		{"stdio 2026", nil, string(params(goodMeta)), Era20260728, 0},
		{"stdio 2025", nil, legacyParams, Era2025, 0},
		{"stdio _meta 2025 version", nil, string(params(`"io.modelcontextprotocol/protocolVersion":"2025-11-25"`)), Era2025, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			era, err := Classify(tc.h, json.RawMessage(tc.params))
			if tc.code == 0 && err != nil || tc.code != 0 && (err == nil || err.Code != tc.code || err.Status != 400) {
				t.Fatalf("Classify err = %+v, want code %d", err, tc.code)
			}
			if err == nil && era != tc.era {
				t.Fatalf("era %v, want %v", era, tc.era)
			}
		})
	}
}

func TestCheckMethod(t *testing.T) {
	for _, tc := range []struct {
		era    Era
		method string
		ok     bool
	}{
		{Era20260728, "tools/call", true},
		{Era20260728, "server/discover", true},
		{Era20260728, "subscriptions/listen", true},
		{Era20260728, "initialize", false},
		{Era20260728, "ping", false},
		{Era20260728, "logging/setLevel", false},
		{Era20260728, "resources/subscribe", false},
		{Era20260728, "resources/unsubscribe", false},
		{Era20260728, "tasks/list", false},
		{Era20260728, "tasks/result", false},
		{Era20260728, "unknown/method", false},
		{Era20260728, "TOOLS/LIST", false},
		{Era20260728, "elicitation/create", false},
		{Era2025, "initialize", true},
		{Era2025, "ping", true},
		{Era2025, "server/discover", false},
		{Era2025, "tools/list", true},
	} {
		err := CheckMethod(tc.era, tc.method)
		if tc.ok != (err == nil) || err != nil && (err.Code != CodeMethodNotFound || err.Status != 404) {
			t.Errorf("CheckMethod(%v, %q) = %+v, want ok=%v", tc.era, tc.method, err, tc.ok)
		}
	}
	for _, m := range []string{"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"} {
		if !Cacheable(m) {
			t.Errorf("%s not cacheable", m)
		}
	}
	if Cacheable("tools/call") {
		t.Error("tools/call cacheable")
	}
}

func TestEras(t *testing.T) {
	if e, ok := EraOf("2026-07-28"); e != Era20260728 || !ok {
		t.Error("2026-07-28")
	}
	if e, ok := EraOf("2024-11-05"); e != Era2025 || !ok {
		t.Error("2024-11-05")
	}
	if e, ok := EraOf("2099-01-01"); e != Era20260728 || ok {
		t.Error("2099-01-01")
	}
	l := Revisions2025()
	l[0] = "x"
	if Revisions2025()[0] != "2025-11-25" || slices.Contains(Revisions2025(), Revision20260728) {
		t.Error("Legacy is shared or holds Modern")
	}
}

func TestStatusOf(t *testing.T) {
	for code, want := range map[int]int{-32601: 404, -32602: 400, -32020: 400, -32021: 400, -32022: 400, -32603: 200, -1: 200} {
		if got := StatusOf(code); got != want {
			t.Errorf("StatusOf(%d) = %d, want %d", code, got, want)
		}
	}
	e := MissingCapability(json.RawMessage(`{"sampling":{}}`))
	if e.Code != -32021 || string(e.Data) != `{"requiredCapabilities":{"sampling":{}}}` || e.Status != 400 {
		t.Errorf("MissingCapability %+v", e)
	}
}

// TestEncodeEnvelope: what the client side writes parses back with
// [ParseEnvelope], and the caller's own _meta keys are never overwritten.
func TestEncodeEnvelope(t *testing.T) {
	env := Envelope{Caps: Caps{Raw: json.RawMessage(`{"elicitation":{}}`)},
		ClientInfo: json.RawMessage(`{"name":"sp","version":"1"}`), LogLevel: "info"}
	for _, tc := range []struct {
		name, params string
		env          Envelope
		want         map[string]string // _meta key → JSON value
		keep         map[string]string // other top-level members → JSON value
		err          bool
	}{
		{"no params", ``, env, map[string]string{MetaProtocolVersion: `"2026-07-28"`, MetaClientCapabilities: `{"elicitation":{}}`,
			MetaClientInfo: `{"name":"sp","version":"1"}`, MetaLogLevel: `"info"`}, nil, false},
		{"null params", `null`, Envelope{}, map[string]string{MetaProtocolVersion: `"2026-07-28"`, MetaClientCapabilities: `{}`}, nil, false},
		{"arguments kept", `{"name":"t","arguments":{"a":[1,2,{"b":"c"}]}}`, Envelope{}, map[string]string{MetaClientCapabilities: `{}`},
			map[string]string{"name": `"t"`, "arguments": `{"a":[1,2,{"b":"c"}]}`}, false},
		{"caller keys win", `{"_meta":{"progressToken":"sp-1","io.modelcontextprotocol/logLevel":"debug"}}`, env,
			map[string]string{MetaProgressToken: `"sp-1"`, MetaLogLevel: `"debug"`, MetaProtocolVersion: `"2026-07-28"`}, nil, false},
		{"null meta", `{"_meta":null}`, Envelope{}, map[string]string{MetaProtocolVersion: `"2026-07-28"`}, nil, false},
		{"not an object", `[1]`, Envelope{}, nil, nil, true},
		{"meta not an object", `{"_meta":3}`, Envelope{}, nil, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := EncodeEnvelope(json.RawMessage(tc.params), tc.env)
			if tc.err {
				if err == nil || !errors.Is(err, ErrParamsNotObject) {
					t.Fatalf("err = %v, want ErrParamsNotObject", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, perr := ParseEnvelope(out); perr != nil {
				t.Fatalf("ParseEnvelope(%s) = %v", out, perr)
			}
			var top map[string]json.RawMessage
			var meta map[string]json.RawMessage
			if json.Unmarshal(out, &top) != nil || json.Unmarshal(top["_meta"], &meta) != nil {
				t.Fatalf("bad output %s", out)
			}
			for k, v := range tc.want {
				if string(meta[k]) != v {
					t.Errorf("_meta[%s] = %s, want %s", k, meta[k], v)
				}
			}
			for k, v := range tc.keep {
				if string(top[k]) != v {
					t.Errorf("%s = %s, want %s", k, top[k], v)
				}
			}
		})
	}
}
