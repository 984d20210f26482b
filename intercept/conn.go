package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// conn is one live connection to an upstream MCP server, speaking raw
// JSON-RPC. Results stay [json.RawMessage] so that schemas and results pass
// through without a decode/encode round trip.
type conn interface {
	// Call sends a request and waits for its response. A JSON-RPC error
	// response is returned as an [*RPCError].
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
	// Done is closed when the connection is gone for good (process exited,
	// stream closed). Err then says why.
	Done() <-chan struct{}
	Err() error
	Close() error
}

// handlers receive what an upstream sends unprompted. They are called on a
// goroutine of their own, never on the connection's read loop, so they may
// call back into the connection.
type handlers struct {
	notify  func(method string, params json.RawMessage)
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// RPCError is a JSON-RPC error returned by an upstream. It is forwarded to
// the client with the same code and message.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream error %d: %s", e.Code, e.Message)
}

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrUpstreamExited means the upstream process or stream ended while a
	// call was in flight.
	ErrUpstreamExited = errors.New("upstream exited")
	// ErrUpstreamUnavailable means the upstream is not connected (starting,
	// restarting or given up) and did not become ready before the call's
	// timeout.
	ErrUpstreamUnavailable = errors.New("upstream unavailable")
	// ErrUnknownTool means no upstream exposes the requested tool.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrInvalidResponse means an upstream answered with something that is
	// not valid JSON-RPC or not the shape the method requires.
	ErrInvalidResponse = errors.New("invalid response from upstream")
)
