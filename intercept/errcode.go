package intercept

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
)

// An upstream's JSON-RPC error must reach the client with its own code,
// message and data. mcp-go v1.2.1 answers every handler error with code
// -32603 and the error's text, and offers no way to choose the code. So a
// forwarded error carries its code and data in its text, behind a marker
// only this process can produce ([codedError]), and the writers that carry
// the server's output put them back: [Router.Output] for stdio,
// [Router.OutputHTTP] for streamable HTTP and SSE. A response without the
// marker is written untouched; until the first forwarded error no output
// is even searched.

// markerNonce makes the marker unguessable, so an upstream cannot choose
// the code of some other error by putting a fake marker in its message.
var markerNonce = func() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}()

// markerStart opens the marker in the error's text; \x1f (unit separator)
// never needs to appear in a human message, and JSON always escapes it.
var markerStart = "\x1fscratchpad-mcp/" + markerNonce + ":"

// markerWire is markerStart as it appears inside a JSON string.
var markerWire = []byte(`\u001fscratchpad-mcp/` + markerNonce + ":")

// markersIssued counts marked errors; zero means no output needs a look.
var markersIssued atomic.Int64

// codedError is what a handler returns to mcp-go for an upstream's
// JSON-RPC error: its text is the upstream's message followed by the
// marker, which carries the code and data.
type codedError struct{ up *UpstreamError }

func newCodedError(up *UpstreamError) error {
	markersIssued.Add(1)
	return &codedError{up}
}

func (e *codedError) Error() string {
	return e.up.Message + markerStart + strconv.Itoa(e.up.Code) + ":" + base64.RawURLEncoding.EncodeToString(e.up.Data) + "\x1f"
}

func (e *codedError) Unwrap() error { return e.up }

// restoreLine rewrites one JSON-RPC error response whose message carries a
// marker. ok is false when line is not such a response; it is then left
// as it was.
func restoreLine(line []byte) ([]byte, bool) {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data,omitempty"`
		} `json:"error"`
	}
	if json.Unmarshal(line, &m) != nil || m.Error == nil {
		return nil, false
	}
	msg, rest, found := strings.Cut(m.Error.Message, markerStart)
	if !found {
		return nil, false
	}
	codeText, rest, ok1 := strings.Cut(rest, ":")
	dataText, _, ok2 := strings.Cut(rest, "\x1f")
	code, err := strconv.Atoi(codeText)
	data, derr := base64.RawURLEncoding.DecodeString(dataText)
	if !ok1 || !ok2 || err != nil || derr != nil || (len(data) > 0 && !json.Valid(data)) {
		return nil, false
	}
	m.Error.Code, m.Error.Message, m.Error.Data = code, msg, data
	if len(m.ID) == 0 {
		m.ID = json.RawMessage("null")
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return out, true
}

// restore rewrites every marked error response in p, one per line; a
// line may be prefixed by an SSE "data:" field name.
func restore(p []byte) []byte {
	if markersIssued.Load() == 0 || !bytes.Contains(p, markerWire) {
		return p
	}
	var out []byte
	rest := p
	for len(rest) > 0 {
		i := bytes.Index(rest, markerWire)
		if i < 0 {
			break
		}
		start := bytes.LastIndexByte(rest[:i], '\n') + 1
		end := bytes.IndexByte(rest[i:], '\n')
		if end < 0 {
			end = len(rest)
		} else {
			end += i
		}
		line := rest[start:end]
		prefixLen := 0
		if after, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			prefixLen = len(line) - len(bytes.TrimLeft(after, " "))
		}
		trail := len(line) - len(bytes.TrimRight(line, "\r"))
		out = append(out, rest[:start+prefixLen]...)
		if fixed, ok := restoreLine(line[prefixLen : len(line)-trail]); ok {
			out = append(out, fixed...)
		} else {
			out = append(out, line[prefixLen:len(line)-trail]...)
		}
		out = append(out, line[len(line)-trail:]...)
		rest = rest[end:]
	}
	return append(out, rest...)
}
