package wire

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// HTTP headers of the streamable HTTP transport.
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix + a tool's x-mcp-header name carries that argument.
	HeaderParamPrefix = "Mcp-Param-"
)

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// ErrInvalidBinding is returned by [ParamBindings] for an inputSchema whose
// x-mcp-header annotations a client could not honour: on a property that is
// not a string, integer or boolean, not a non-empty HTTP token, or the same
// name twice (header names are case-insensitive). Such a tool is not listed to
// 2026-07-28 clients (go-sdk filterValidTools does the same).
var ErrInvalidBinding = errors.New("invalid x-mcp-header annotation")

// Binding ties a tool argument (a path through inputSchema properties) to the
// Mcp-Param-<Header> header that repeats it.
type Binding struct {
	Path   []string
	Header string
}

// headerValue is a header's value with the optional whitespace around it
// removed (net/http trims it when it parses a request; a header built in code
// may still carry it) and whether it was sent at all.
func headerValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return strings.Trim(vs[0], " \t"), true
}

// Classify says which era a request (a call: it has an id) belongs to, from
// the Mcp-Protocol-Version header and params._meta's protocolVersion, with the
// checks go-sdk v1.8.0 makes before anything else (streamable.go servePOST).
// h is nil on stdio, where only _meta counts. A request is of 2026-07-28 when its
// _meta version claims 2026-07-28 or later (string order, as go-sdk: so
// "v999.0.0" is a 2026-07-28 request answered -32022 by [ParseEnvelope]). Over
// HTTP, a request whose header claims 2026-07-28 or later, or whose _meta names any version,
// must carry both and they must agree: header missing or different is -32020,
// _meta version missing is -32602 (all HTTP 400).
func Classify(h http.Header, params json.RawMessage) (Era, *Error) {
	var metaVersion string
	if meta, ok := member(params, "_meta"); ok {
		if v, ok := member(meta, MetaProtocolVersion); ok && isString(v) {
			metaVersion = jsonscan.Unquote(v)
		}
	}
	if h != nil {
		hv, _ := headerValue(h, HeaderProtocolVersion)
		if (hv != "" && claimed(hv) == Era20260728) || metaVersion != "" {
			switch {
			case hv == "":
				return Era2025, HeaderMismatch("%s header is required for requests carrying %q", HeaderProtocolVersion, MetaProtocolVersion)
			case metaVersion == "":
				return Era2025, InvalidParams("missing or invalid _meta field %q", MetaProtocolVersion)
			case hv != metaVersion:
				return Era2025, HeaderMismatch("%s header %q does not match request %s %q", HeaderProtocolVersion, hv, MetaProtocolVersion, metaVersion)
			}
		}
	}
	if metaVersion != "" && claimed(metaVersion) == Era20260728 {
		return Era20260728, nil
	}
	return Era2025, nil
}

// CheckHeaders checks a 2026-07-28 HTTP request's Mcp-Method, Mcp-Name and
// Mcp-Param-* headers against its body; any disagreement is -32020 (HTTP 400).
// Header names are case-insensitive (http.Header canonicalizes them), values
// case-sensitive ("TOOLS/LIST" is not "tools/list"); whitespace around a value
// is ignored. Mcp-Name is required for the methods with a [MethodInfo]
// NameField and compared after [DecodeHeaderValue]. bindings are the called
// tool's ([ParamBindings]; nil for other methods): an argument present and not
// null needs its header, equal after decoding (integers numerically: "42.0"
// matches 42); an absent or null argument must have none.
func CheckHeaders(h http.Header, method string, params json.RawMessage, bindings []Binding) *Error {
	hm, ok := headerValue(h, HeaderMethod)
	if !ok || hm == "" {
		return HeaderMismatch("missing required %s header", HeaderMethod)
	}
	if hm != method {
		return HeaderMismatch("%s header %q does not match body method %q", HeaderMethod, hm, method)
	}
	if f := methods[method].NameField; f != "" {
		hn, ok := headerValue(h, HeaderName)
		if !ok || hn == "" {
			return HeaderMismatch("missing required %s header for method %q", HeaderName, method)
		}
		dec, ok := DecodeHeaderValue(hn)
		if !ok {
			return HeaderMismatch("%s header holds invalid base64", HeaderName)
		}
		// A body without the name (or with a non-string one) mismatches any
		// header, as in go-sdk (which then compares with "").
		var body string
		if v, ok := member(params, f); ok && isString(v) {
			body = jsonscan.Unquote(v)
		} else if ok && !isNull(v) {
			return HeaderMismatch("params.%s is not a string", f)
		}
		if dec != body {
			return HeaderMismatch("%s header %q does not match body %s %q", HeaderName, hn, f, body)
		}
	}
	if len(bindings) == 0 {
		return nil
	}
	args, _ := member(params, "arguments")
	for _, b := range bindings {
		name := HeaderParamPrefix + b.Header
		hv, sent := headerValue(h, name)
		arg, ok := lookupPath(args, b.Path)
		if !ok || isNull(arg) {
			if sent {
				return HeaderMismatch("unexpected %s header for absent or null argument %q", name, strings.Join(b.Path, "."))
			}
			continue
		}
		if !sent {
			return HeaderMismatch("missing %s header for argument %q", name, strings.Join(b.Path, "."))
		}
		dec, ok := DecodeHeaderValue(hv)
		if !ok {
			return HeaderMismatch("%s header holds invalid base64", name)
		}
		if !primitiveEqual(dec, arg) {
			return HeaderMismatch("%s header %q does not match argument %q", name, hv, strings.Join(b.Path, "."))
		}
	}
	return nil
}

// HeadersFor is the client side of [CheckHeaders]: the Mcp-Method, Mcp-Name
// and Mcp-Param-* headers for a request (the protocol version header is the
// caller's).
func HeadersFor(method string, params json.RawMessage, bindings []Binding) http.Header {
	h := http.Header{}
	h.Set(HeaderMethod, method)
	if f := methods[method].NameField; f != "" {
		if v, ok := member(params, f); ok && isString(v) {
			h.Set(HeaderName, EncodeHeaderValue(jsonscan.Unquote(v)))
		}
	}
	args, _ := member(params, "arguments")
	for _, b := range bindings {
		arg, ok := lookupPath(args, b.Path)
		if !ok || isNull(arg) {
			continue
		}
		if s, ok := primitiveString(arg); ok {
			h.Set(HeaderParamPrefix+b.Header, EncodeHeaderValue(s))
		}
	}
	return h
}

// EncodeHeaderValue is s as a header value: as is when it is printable ASCII
// without space or tab at either end, else (and when it looks like the
// sentinel itself) "=?base64?" + standard base64 of its bytes + "?=".
func EncodeHeaderValue(s string) string {
	if needsB64(s) {
		return b64Prefix + base64.StdEncoding.EncodeToString([]byte(s)) + b64Suffix
	}
	return s
}

// DecodeHeaderValue undoes [EncodeHeaderValue]; false for a sentinel-wrapped
// value that is not valid padded standard base64 (bad padding or alphabet;
// non-zero trailing bits are accepted, as go-sdk v1.8.0 accepts them). A value
// without the whole wrapper is taken literally.
func DecodeHeaderValue(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, b64Prefix); ok {
		if inner, ok := strings.CutSuffix(inner, b64Suffix); ok {
			b, err := base64.StdEncoding.DecodeString(inner)
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return v, true
}

func needsB64(s string) bool {
	if s == "" {
		return false
	}
	if c := s[0]; c == ' ' || c == '\t' {
		return true
	}
	if c := s[len(s)-1]; c == ' ' || c == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return true
		}
	}
	return strings.HasPrefix(s, b64Prefix) && strings.HasSuffix(s, b64Suffix)
}

// lookupPath follows path through nested objects from args.
func lookupPath(args []byte, path []string) ([]byte, bool) {
	cur := args
	for _, p := range path {
		v, ok := member(cur, p)
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, len(path) > 0
}

const maxSafeInteger = 1<<53 - 1

// primitiveString is a string, boolean or safe integer argument as its header
// text; false for anything else (number with a fraction, object, array).
func primitiveString(raw []byte) (string, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// primitiveEqual compares a decoded header with the argument: integers
// numerically (go-sdk primitiveEqual), the rest as text.
func primitiveEqual(header string, arg []byte) bool {
	want, ok := primitiveString(arg)
	if !ok {
		return false
	}
	if isNumber(arg) {
		f, err := strconv.ParseFloat(header, 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			return false
		}
		return strconv.FormatInt(int64(f), 10) == want
	}
	return header == want
}

type schemaProp struct {
	Type       json.RawMessage       `json:"type"`
	Header     json.RawMessage       `json:"x-mcp-header"`
	Properties map[string]schemaProp `json:"properties"`
}

// ParamBindings reads a tool's inputSchema for x-mcp-header annotations,
// reachable through "properties" only (one inside items, oneOf or $defs binds
// nothing), and checks them; see [ErrInvalidBinding]. Bindings come in no
// particular order.
func ParamBindings(inputSchema json.RawMessage) ([]Binding, error) {
	if len(inputSchema) == 0 {
		return nil, nil
	}
	var root schemaProp
	if err := json.Unmarshal(inputSchema, &root); err != nil {
		return nil, fmt.Errorf("%w: inputSchema: %v", ErrInvalidBinding, err)
	}
	var out []Binding
	seen := map[string]bool{}
	var walk func(props map[string]schemaProp, prefix []string) error
	walk = func(props map[string]schemaProp, prefix []string) error {
		for name, p := range props {
			path := append(append([]string(nil), prefix...), name)
			if p.Header != nil {
				var hn string
				if json.Unmarshal(p.Header, &hn) != nil || !isToken(hn) {
					return fmt.Errorf("%w: property %q: x-mcp-header must be a non-empty HTTP token", ErrInvalidBinding, strings.Join(path, "."))
				}
				var typ string
				_ = json.Unmarshal(p.Type, &typ)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("%w: property %q: x-mcp-header on type %s (only string, integer, boolean)", ErrInvalidBinding, strings.Join(path, "."), p.Type)
				}
				if l := strings.ToLower(hn); seen[l] {
					return fmt.Errorf("%w: duplicate x-mcp-header %q", ErrInvalidBinding, hn)
				} else {
					seen[l] = true
				}
				out = append(out, Binding{Path: path, Header: hn})
			}
			if err := walk(p.Properties, path); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root.Properties, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// isToken: 1*tchar (RFC 9110).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
