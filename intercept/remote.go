package intercept

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// remoteConn adapts mcp-go's streamable HTTP client transport to [conn].
// That transport already returns raw results; this only maps errors, ids
// and unprompted messages. Legacy SSE upstreams get [sseConn] instead.
type remoteConn struct {
	name   string
	tr     transport.Interface
	nextID atomic.Int64

	mu      sync.Mutex
	inbound map[string]context.CancelFunc // the upstream's requests being served

	*lifetime
	events chan func()
}

// dialRemote connects to a remote upstream of kind (config.TransportSSE
// or config.TransportHTTPStreamable). ctx bounds the connection's life;
// timeout bounds connecting.
func dialRemote(ctx context.Context, timeout time.Duration, name, kind, url string, headers map[string]string, h handlers, log *slog.Logger) (conn, error) {
	if kind == config.TransportSSE {
		c, err := dialSSE(ctx, timeout, name, url, headers, h, log)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(headers), transport.WithHTTPLogger(log), transport.WithContinuousListening())
	if err != nil {
		return nil, fmt.Errorf("upstream %q: %w", name, err)
	}
	c := newRemoteConn(name, tr, h)
	// Start's context is the connection's: the listening stream (where the
	// upstream's requests and notifications arrive) ends with it. So it is
	// not the dial timeout; a connect that takes too long is closed
	// instead.
	timer := time.AfterFunc(timeout, func() { _ = tr.Close() })
	err = tr.Start(ctx)
	if !timer.Stop() && err == nil {
		err = fmt.Errorf("no answer within %s", timeout)
	}
	if err != nil {
		_ = tr.Close()
		c.fail(fmt.Errorf("%w: %v", ErrUpstreamExited, err))
		return nil, fmt.Errorf("upstream %q: connect %s: %w", name, url, err)
	}
	return c, nil
}

// newRemoteConn wires tr's unprompted messages to h. Requests from the
// upstream are served each on a context of their own, which the
// upstream's notifications/cancelled for that request ends: mcp-go's
// transport does not do it.
func newRemoteConn(name string, tr transport.Interface, h handlers) *remoteConn {
	c := &remoteConn{name: name, tr: tr, lifetime: newLifetime(), events: make(chan func(), 256), inbound: map[string]context.CancelFunc{}}
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/cancelled" && c.cancelInbound(n.Params.AdditionalFields["requestId"]) {
			return
		}
		if h.notify == nil {
			return
		}
		params, _ := json.Marshal(n.Params)
		select {
		case c.events <- func() { h.notify(n.Method, params) }:
		case <-c.done:
		}
	})
	if bi, ok := tr.(transport.BidirectionalInterface); ok && h.request != nil {
		bi.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
			ctx, cancel := context.WithCancel(ctx)
			key := idKey(req.ID)
			c.mu.Lock()
			c.inbound[key] = cancel
			c.mu.Unlock()
			defer func() {
				c.mu.Lock()
				delete(c.inbound, key)
				c.mu.Unlock()
				cancel()
			}()
			go func() {
				select {
				case <-c.done:
					cancel()
				case <-ctx.Done():
				}
			}()
			params, _ := json.Marshal(req.Params)
			res, err := h.request(ctx, req.Method, params)
			if err != nil {
				if rerr, ok := err.(*RPCError); ok {
					d := &mcp.JSONRPCErrorDetails{Code: rerr.Code, Message: rerr.Message}
					if len(rerr.Data) > 0 {
						d.Data = rerr.Data
					}
					return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Error: d}, nil
				}
				return nil, err
			}
			return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: res}, nil
		})
	}
	go func() {
		for {
			select {
			case f := <-c.events:
				f()
			case <-c.done:
				return
			}
		}
	}()
	return c
}

// cancelInbound ends the upstream's request with id, if it is being
// served; it reports whether it was.
func (c *remoteConn) cancelInbound(id any) bool {
	key := idKey(id)
	c.mu.Lock()
	cancel := c.inbound[key]
	c.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel()
	return true
}

// idKey is a JSON-RPC id as its JSON text: 7 and "7" differ.
func idKey(id any) string {
	b, _ := json.Marshal(id)
	return string(b)
}

func (c *remoteConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := mcp.NewRequestId(c.nextID.Add(1))
	resp, err := c.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		if ctx.Err() != nil {
			_ = c.Notify(context.Background(), "notifications/cancelled", map[string]any{"requestId": id, "reason": ctx.Err().Error()})
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("upstream %q: %w", c.name, err)
	}
	if resp.Error != nil {
		rerr := &RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			rerr.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, rerr
	}
	if resp.Result == nil {
		return nil, fmt.Errorf("%w: response to %s has neither result nor error", ErrInvalidResponse, method)
	}
	return resp.Result, nil
}

func (c *remoteConn) Notify(ctx context.Context, method string, params any) error {
	n := mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: method}}
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &n.Params); err != nil {
			return err
		}
	}
	return c.tr.SendNotification(ctx, n)
}

func (c *remoteConn) Close() error {
	err := c.tr.Close()
	c.fail(fmt.Errorf("%w: closed", ErrUpstreamExited))
	return err
}
