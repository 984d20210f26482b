package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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

// lifetime is the end of a connection, shared by both kinds: Done is
// closed once, by the first fail, and Err says why.
type lifetime struct {
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

func newLifetime() *lifetime { return &lifetime{done: make(chan struct{})} }

func (l *lifetime) fail(err error) {
	l.once.Do(func() {
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
		close(l.done)
	})
}

// Done is closed when the connection is gone for good.
func (l *lifetime) Done() <-chan struct{} { return l.done }

// Err says why the connection ended; nil while it lives.
func (l *lifetime) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
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
	// ErrUpstreamTimeout means an upstream did not answer a forwarded
	// request within its server's timeout.
	ErrUpstreamTimeout = errors.New("upstream timed out")
)

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
