package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The _meta keys of the 2026-07-28 envelope (go-sdk v1.8.0 mcp/protocol.go
// MetaKey*).
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken      = "progressToken"
)

// Envelope is what a 2026-07-28 request carries in params._meta instead of a
// session: who is asking and what it can do, for this request only ("servers
// MUST NOT infer capabilities from prior requests").
type Envelope struct {
	Version string
	Caps    Caps
	// ClientInfo is the Implementation object as sent, nil if absent.
	ClientInfo json.RawMessage
	// LogLevel is "" when absent: then no notifications/message is sent.
	LogLevel string
	// ProgressToken is the token as sent (string or number), nil if absent.
	ProgressToken json.RawMessage
}

// Caps is the client capabilities of one request.
type Caps struct {
	// Raw is the clientCapabilities object as sent.
	Raw                                          json.RawMessage
	Sampling, Elicitation, ElicitationURL, Roots bool
	// Extensions is capabilities.extensions by id (nil if none).
	Extensions map[string]json.RawMessage
}

// Allows reports whether an input request of kind method
// ("elicitation/create", "sampling/createMessage", "roots/list") may be put to
// a client with these capabilities.
func (c Caps) Allows(method string) bool {
	switch method {
	case "elicitation/create":
		return c.Elicitation
	case "sampling/createMessage":
		return c.Sampling
	case "roots/list":
		return c.Roots
	}
	return false
}

// ParseEnvelope reads and validates the envelope in the params (a JSON
// object, or empty) of a request [Classify] found 2026-07-28. A missing or malformed part is -32602
// (HTTP 400): no _meta, no string protocolVersion, clientCapabilities absent or
// not an object, clientInfo present but not an object with string name and
// version, logLevel not a string, progressToken neither string nor number. A
// well-formed version that is not served is -32022 with the versions that are.
// The checks run in go-sdk v1.8.0's order (shared.go validateRequestMeta, then
// server.go's version check), so the same request gets the same error.
func ParseEnvelope(params json.RawMessage) (Envelope, *Error) {
	var env Envelope
	meta, ok := member(params, "_meta")
	if !ok || !isObject(meta) {
		return env, InvalidParams("missing or invalid _meta field %q", MetaProtocolVersion)
	}
	v, ok := member(meta, MetaProtocolVersion)
	if !ok || !isString(v) || jsonscan.Unquote(v) == "" {
		return env, InvalidParams("missing or invalid _meta field %q", MetaProtocolVersion)
	}
	env.Version = jsonscan.Unquote(v)
	if ci, ok := member(meta, MetaClientInfo); ok {
		var impl struct {
			Name    *string `json:"name"`
			Version *string `json:"version"`
		}
		if !isObject(ci) || json.Unmarshal(ci, &impl) != nil || impl.Name == nil || impl.Version == nil {
			return env, InvalidParams("invalid _meta field %q", MetaClientInfo)
		}
		env.ClientInfo = ci
	}
	caps, ok := member(meta, MetaClientCapabilities)
	if !ok || !isObject(caps) {
		return env, InvalidParams("missing or invalid _meta field %q", MetaClientCapabilities)
	}
	c, err := parseCaps(caps)
	if err != nil {
		return env, InvalidParams("invalid _meta field %q: %v", MetaClientCapabilities, err)
	}
	env.Caps = c
	if ll, ok := member(meta, MetaLogLevel); ok && !isNull(ll) {
		if !isString(ll) {
			return env, InvalidParams("invalid _meta field %q", MetaLogLevel)
		}
		env.LogLevel = jsonscan.Unquote(ll)
	}
	if pt, ok := member(meta, MetaProgressToken); ok && !isNull(pt) {
		if !isString(pt) && !isNumber(pt) {
			return env, InvalidParams("invalid _meta field %q", MetaProgressToken)
		}
		env.ProgressToken = pt
	}
	if env.Version != Revision20260728 {
		return env, UnsupportedVersion(env.Version)
	}
	return env, nil
}

func parseCaps(raw json.RawMessage) (Caps, error) {
	var c struct {
		Sampling    json.RawMessage            `json:"sampling"`
		Roots       json.RawMessage            `json:"roots"`
		Elicitation json.RawMessage            `json:"elicitation"`
		Extensions  map[string]json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return Caps{}, err
	}
	// go-sdk decodes clientCapabilities into its struct, so a declared
	// capability that is not an object fails there; it fails here too.
	for name, v := range map[string]json.RawMessage{"sampling": c.Sampling, "roots": c.Roots, "elicitation": c.Elicitation} {
		if v != nil && !isObject(v) && !isNull(v) {
			return Caps{}, fmt.Errorf("%s is not an object", name)
		}
	}
	caps := Caps{Raw: raw, Extensions: c.Extensions}
	caps.Sampling = isObject(c.Sampling)
	caps.Roots = isObject(c.Roots)
	if isObject(c.Elicitation) {
		// {} means form only (the 2025-11-25 rule); url must be declared.
		var e struct{ Form, URL json.RawMessage }
		_ = json.Unmarshal(c.Elicitation, &e)
		caps.Elicitation = isObject(e.Form) || e.Form == nil && e.URL == nil
		caps.ElicitationURL = isObject(e.URL)
	}
	return caps, nil
}

// member is the value of key in the JSON object b (the last one, as decoding
// takes it); false if b is not a valid object or has no such member.
func member(b []byte, key string) ([]byte, bool) {
	if !isObject(b) || !jsonscan.Valid(b) {
		return nil, false
	}
	return jsonscan.Lookup(b, key)
}

func first(b []byte) byte {
	i := jsonscan.SkipSpace(b, 0)
	if i < len(b) {
		return b[i]
	}
	return 0
}

func isObject(b []byte) bool { return first(b) == '{' }
func isString(b []byte) bool { return first(b) == '"' }
func isNull(b []byte) bool   { return first(b) == 'n' }
func isNumber(b []byte) bool { c := first(b); return c == '-' || c >= '0' && c <= '9' }

// ErrParamsNotObject is returned by [EncodeEnvelope] for params that are not
// a JSON object (or empty).
var ErrParamsNotObject = errors.New("params is not a JSON object")

// EncodeEnvelope is the client side of [ParseEnvelope]: params (an object,
// or empty for none) with env written into its _meta — protocolVersion
// (env.Version, [Revision20260728] when empty), clientCapabilities (env.Caps.Raw, {}
// when nil), clientInfo and logLevel when set. A key the params' _meta
// already has is kept as the caller wrote it (a rewritten progressToken,
// a caller's own logLevel): the envelope only fills in what is missing.
// Only params and its _meta are decoded, one level deep: arguments and
// every other member stay the caller's bytes.
func EncodeEnvelope(params json.RawMessage, env Envelope) (json.RawMessage, error) {
	top := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(params); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if !isObject(t) {
			return nil, ErrParamsNotObject
		}
		if err := json.Unmarshal(t, &top); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrParamsNotObject, err)
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := top["_meta"]; ok && !isNull(m) {
		if !isObject(m) {
			return nil, fmt.Errorf("%w: _meta is not an object", ErrParamsNotObject)
		}
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, fmt.Errorf("%w: _meta: %v", ErrParamsNotObject, err)
		}
	}
	set := func(k string, v json.RawMessage) {
		if _, ok := meta[k]; !ok && v != nil {
			meta[k] = v
		}
	}
	version := env.Version
	if version == "" {
		version = Revision20260728
	}
	vb, _ := json.Marshal(version)
	set(MetaProtocolVersion, vb)
	caps := env.Caps.Raw
	if len(bytes.TrimSpace(caps)) == 0 || isNull(caps) {
		caps = json.RawMessage("{}")
	}
	set(MetaClientCapabilities, caps)
	if len(env.ClientInfo) > 0 {
		set(MetaClientInfo, env.ClientInfo)
	}
	if env.LogLevel != "" {
		lb, _ := json.Marshal(env.LogLevel)
		set(MetaLogLevel, lb)
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("%w: _meta: %v", ErrParamsNotObject, err)
	}
	top["_meta"] = mb
	return json.Marshal(top)
}
