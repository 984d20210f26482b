package intercept

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
	c := &remoteConn{name: name, tr: tr, lifetime: newLifetime(), events: make(chan func(), 256)}
	tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
		if h.notify == nil {
			return
		}
		params, _ := json.Marshal(n.Params)
		select {
		case c.events <- func() { h.notify(n.Method, params) }:
		case <-c.done:
		}
	})
	if h.request != nil {
		tr.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
			params, _ := json.Marshal(req.Params)
			res, err := h.request(ctx, req.Method, params)
			if err != nil {
				if rerr, ok := err.(*RPCError); ok {
					return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Error: &mcp.JSONRPCErrorDetails{Code: rerr.Code, Message: rerr.Message}}, nil
				}
				return nil, err
			}
			return &transport.JSONRPCResponse{JSONRPC: "2.0", ID: req.ID, Result: res}, nil
		})
	}
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
		return nil, fmt.Errorf("upstream %q: connect %s: %w", name, url, err)
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
	return c, nil
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
