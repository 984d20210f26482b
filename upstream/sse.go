package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// sseConn speaks the legacy MCP SSE transport (protocol 2024-11-05): a GET
// opens an event stream whose first endpoint event names the URL to POST
// messages to, and every message from the server arrives as a message
// event. It is ours rather than mcp-go's client transport because that one
// cannot receive the server's own requests (sampling, elicitation, roots),
// which real SSE servers send and the proxy forwards. The JSON-RPC is
// [peer]'s, as for stdio.
type sseConn struct {
	*peer
	url      *url.URL // the stream's
	headers  map[string]string
	hc       *http.Client
	ctx      context.Context // the stream's; cancelling it ends the stream and every POST
	cancel   context.CancelCauseFunc
	endpoint *url.URL      // set by the reader before ready is closed, then read-only
	ready    chan struct{} // closed when the endpoint event arrived
	endErr   error         // why the stream ended, set by the reader before it fails the connection
	wg       sync.WaitGroup
}

var (
	// errForeignEndpoint means an upstream's endpoint event named another
	// origin than its stream: messages (and the configured headers, which
	// may be credentials) would go to a server the config does not name.
	errForeignEndpoint = errors.New("endpoint on another origin refused")
	// errStreamEnded means the server closed the event stream: with the
	// legacy transport that is the end of the session.
	errStreamEnded = errors.New("the SSE stream ended")
	errSSEClosed   = errors.New("closed")
)

// dialSSE opens the event stream at rawURL and waits, at most timeout, for
// its endpoint event. ctx bounds the connection's life.
func dialSSE(ctx context.Context, timeout time.Duration, name, rawURL string, headers map[string]string, wrap func(http.RoundTripper) http.RoundTripper, h handlers, log *slog.Logger) (*sseConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the whole URL, secrets and all.
		return nil, fmt.Errorf("upstream %q: url does not parse", name)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("upstream %q: url %s: want http or https", name, config.RedactURL(rawURL))
	}
	// A client of its own, so Close can drop its idle connections:
	// nothing of the connection outlives it.
	c := &sseConn{
		url:     u,
		headers: headers,
		hc:      newHTTPClient(wrap),
		ready:   make(chan struct{}),
	}
	c.peer = newPeer(name, h, log, c.send)
	c.sendFailed = func(ctx context.Context, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	var timer *time.Timer
	fail := func(err error) (*sseConn, error) {
		if timer != nil {
			timer.Stop()
		}
		c.cancel(err)
		c.hc.CloseIdleConnections()
		return nil, fmt.Errorf("upstream %q: connect %s: %w", name, config.RedactURL(rawURL), err)
	}
	if timeout > 0 {
		timer = time.AfterFunc(timeout, func() { c.cancel(fmt.Errorf("no endpoint event within %s", timeout)) })
	}

	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return fail(err)
	}
	c.setHeaders(req)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := do(c.hc, req)
	if err != nil {
		if cause := context.Cause(c.ctx); cause != nil {
			err = cause
		}
		return fail(err)
	}
	if err := httpStatusError(resp); err != nil {
		resp.Body.Close()
		return fail(err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return fail(fmt.Errorf("answered with Content-Type %q, not an SSE stream (text/event-stream)", resp.Header.Get("Content-Type")))
	}

	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		c.deliver()
	}()
	go func() {
		defer c.wg.Done()
		c.read(resp.Body)
	}()
	select {
	case <-c.ready:
		if timer == nil || timer.Stop() {
			return c, nil
		}
		// The timer fired as the endpoint arrived: the stream is being
		// cancelled already.
		<-c.done
	case <-c.done:
	}
	_ = c.Close()
	return nil, fmt.Errorf("upstream %q: connect %s: %w", name, config.RedactURL(rawURL), c.endErr)
}

// read consumes the event stream until it ends, then fails the connection
// with the reason.
func (c *sseConn) read(body io.ReadCloser) {
	defer body.Close()
	r := newSSEReader(body)
	r.max = c.h.maxMessage
	err := c.readEvents(r)
	if cause := context.Cause(c.ctx); cause != nil {
		err = cause // cancelled: the cause says why better than the read error
	} else if errors.Is(err, io.EOF) {
		err = errStreamEnded
	}
	c.endErr = err
	c.fail(fmt.Errorf("%w: %w", ErrUpstreamExited, err))
	// In-flight POSTs are pointless once the session is gone.
	c.cancel(err)
}

func (c *sseConn) readEvents(r *sseReader) error {
	for {
		ev, err := r.next()
		if err != nil {
			return err
		}
		switch ev.name {
		case "endpoint":
			if c.endpoint != nil {
				c.log.Warn("upstream sent a second endpoint event; ignored", "server", c.name)
				continue
			}
			u, err := resolveEndpoint(c.url, string(ev.data))
			if err != nil {
				return err
			}
			c.endpoint = u
			close(c.ready)
		case "message":
			if c.endpoint == nil {
				// It could not be answered: there is nowhere to POST yet.
				c.log.Warn("upstream sent a message before its endpoint event; ignored", "server", c.name, "data", truncate(string(ev.data), 200))
				continue
			}
			if ev.skipped != nil {
				c.skipped(ev.skipped)
			} else if len(bytes.TrimSpace(ev.data)) == 0 {
				// nothing to dispatch
			} else if ev.scan != nil {
				c.dispatchScanned(ev.data, ev.scan)
			} else {
				c.dispatch(ev.data)
			}
		default:
			c.log.Debug("upstream sent an SSE event of unknown type; ignored", "server", c.name, "event", ev.name)
		}
	}
}

// send POSTs one message to the endpoint. Servers answer 202 Accepted (or
// 200) and send any response over the stream.
func (c *sseConn) send(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.ctx, cancel)()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(msg))
	if err != nil {
		return err
	}
	c.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := do(c.hc, req)
	if err != nil {
		if c.ctx.Err() != nil {
			// The connection ended (or is ending), which says why.
			if err := c.Err(); err != nil {
				return err
			}
			return fmt.Errorf("%w: %w", ErrUpstreamExited, context.Cause(c.ctx))
		}
		return fmt.Errorf("upstream %q: POST to its message endpoint: %w", c.name, err)
	}
	defer resp.Body.Close()
	if err := httpStatusError(resp); err != nil {
		return fmt.Errorf("upstream %q: POST to its message endpoint: %w", c.name, err)
	}
	// Read a little of what is left so the HTTP connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	return nil
}

func (c *sseConn) setHeaders(req *http.Request) {
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
}

// Close ends the stream and any POST in flight, and returns once the
// connection's goroutines have (requests being served see their context
// cancelled).
func (c *sseConn) Close() error {
	c.fail(fmt.Errorf("%w: %w", ErrUpstreamExited, errSSEClosed))
	c.cancel(errSSEClosed)
	c.wg.Wait()
	c.serving.Wait() // after the reader: nothing starts new ones
	c.hc.CloseIdleConnections()
	return nil
}

// resolveEndpoint resolves an endpoint event's data against the stream's
// URL. Only the stream's own origin is accepted: the config names that
// server, and the headers sent with every POST may be its credentials.
func resolveEndpoint(stream *url.URL, data string) (*url.URL, error) {
	ref := strings.TrimSpace(data)
	if ref == "" {
		return nil, errors.New("empty endpoint event")
	}
	u, err := stream.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("endpoint event %q: %w", truncate(ref, 200), err)
	}
	if !sameOrigin(stream, u) {
		return nil, fmt.Errorf("%w: the upstream's endpoint event names %s, its SSE stream is on %s", errForeignEndpoint, origin(u), origin(stream))
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}
