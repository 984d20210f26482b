package upstream

import (
	"context"
	"encoding/json"
	"sync"
)

// conn is one live connection to an upstream MCP server, speaking raw
// JSON-RPC over one transport. Results stay [json.RawMessage] so that
// schemas and results pass through without a decode/encode round trip.
// It does no MCP handshake and never reconnects: [Upstream] does both.
type conn interface {
	// Call sends a request and waits for its response. A JSON-RPC error
	// response is returned as an [*RPCError]; a request that was never
	// sent as a [*notSentError].
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	// callTyped is Call that also returns the result's resultType when
	// the transport's reader found it as the answer arrived, else "".
	callTyped(ctx context.Context, method string, params any) (json.RawMessage, string, error)
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
	// Done is closed when the connection is gone for good (process exited,
	// stream closed, session expired). Err then says why.
	Done() <-chan struct{}
	Err() error
	Close() error
}

// handshaker is a conn that takes part in the handshake: streamable HTTP
// sends the negotiated protocol version on every later request and opens
// its listening stream once the session is initialized.
type handshaker interface {
	negotiated(protocolVersion string)
	initialized()
}

// lifetime is the end of a connection, shared by every kind: Done is
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
// send on the connection.
type handlers struct {
	notify  func(method string, params json.RawMessage)
	request func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// maxMessage is the largest message read (max_result_bytes); a
	// larger one fails the call it answers. 0: no limit.
	maxMessage int
}
