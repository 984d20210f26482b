package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// Upstream is one configured upstream MCP server; package upstream
// connects to it, keeps it connected and lists what it offers.
type Upstream = upstream.Upstream

// RPCError is a JSON-RPC error returned by an upstream. It is forwarded to
// the client with the same code and message.
type RPCError = upstream.RPCError

// Upstream states, as reported by [Upstream.State].
const (
	StateConnecting = upstream.StateConnecting
	StateReady      = upstream.StateReady
	StateRestarting = upstream.StateRestarting
	StateFailed     = upstream.StateFailed
	StateStopped    = upstream.StateStopped
)

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrUpstreamExited is [upstream.ErrUpstreamExited].
	ErrUpstreamExited = upstream.ErrUpstreamExited
	// ErrUpstreamUnavailable is [upstream.ErrUpstreamUnavailable].
	ErrUpstreamUnavailable = upstream.ErrUpstreamUnavailable
	// ErrInvalidResponse is [upstream.ErrInvalidResponse].
	ErrInvalidResponse = upstream.ErrInvalidResponse
	// ErrUnknownTool means no upstream exposes the requested tool.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUpstreamTimeout means an upstream did not answer a forwarded
	// request within its server's timeout.
	ErrUpstreamTimeout = errors.New("upstream timed out")
)

// rpcMessage is any JSON-RPC message; which fields are set says which kind.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// outcome is what a response to method means: its result, or its error
// as an [*RPCError].
func (m rpcMessage) outcome(method string) (json.RawMessage, error) {
	if m.Error != nil {
		return nil, m.Error
	}
	if m.Result == nil {
		return nil, fmt.Errorf("%w: response to %s has neither result nor error", ErrInvalidResponse, method)
	}
	return m.Result, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// UpstreamError is an upstream's JSON-RPC error response, as a handler
// returns it. Its message is the upstream's, verbatim. The client sees
// the upstream's code and data too when the server's output goes through
// [Router.Output] or [Router.OutputHTTP] (mcp-go alone would send
// -32603); Go callers get them with [errors.As].
type UpstreamError struct {
	*RPCError
}

func (e *UpstreamError) Error() string { return e.Message }
func (e *UpstreamError) Unwrap() error { return e.RPCError }

// forwardError turns an upstream's JSON-RPC error into the error a
// handler returns to mcp-go: the upstream's code, message and data, put
// back on the way out (see codedError). For a client of protocol
// 2026-07-28, which has no -32042, a URL elicitation the upstream requires
// becomes mcp-go's [mcp.URLElicitationRequiredError], which mcp-go turns
// into that protocol's multi round-trip request.
func forwardError(ctx context.Context, e *RPCError) error {
	if e.Code == mcp.URL_ELICITATION_REQUIRED && mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		var d struct {
			Elicitations []mcp.ElicitationParams `json:"elicitations"`
		}
		if json.Unmarshal(e.Data, &d) == nil && len(d.Elicitations) > 0 {
			return mcp.URLElicitationRequiredError{Elicitations: d.Elicitations}
		}
	}
	return newCodedError(&UpstreamError{e})
}
