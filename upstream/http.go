package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Streamable HTTP (MCP 2025-03-26 and later): every message the client
// sends is a POST; the server answers a request with one JSON body or
// with an event stream that carries the request's notifications, its own
// requests and finally the response. A GET opens a listening stream for
// messages that belong to no request. Either stream may break and be
// resumed with GET and Last-Event-ID.
const (
	headerSession         = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
	headerLastEventID     = "Last-Event-ID"
)

const (
	// defaultRetry is the wait before reconnecting a stream when the
	// server sent no retry field.
	defaultRetry = time.Second
	// maxResumes bounds how often one call's broken stream is resumed.
	maxResumes = 5
	// deleteTimeout bounds ending the session on Close.
	deleteTimeout = 2 * time.Second
	// maxListenBackoff caps the wait between listening streams the server
	// refuses with an error status.
	maxListenBackoff = 30 * time.Second
)

// errNoListenStream means the server offers no GET stream (405, or 404
// when there is no session the 404 could mean lost, or an answer that is
// not an event stream): it only talks within requests, which is allowed.
var errNoListenStream = errors.New("the server offers no listening stream")

// httpConn speaks streamable HTTP. Like the other transports it hands
// every message, in the order its stream carried it, to [peer.dispatch];
// the per-stream order is what lets progress reach the caller before the
// response it precedes.
type httpConn struct {
	*peer
	url     string
	headers map[string]string
	hc      *http.Client
	ctx     context.Context // the connection's; cancelling it ends every stream and request
	cancel  context.CancelCauseFunc
	wg      sync.WaitGroup // stream readers and the delivery loop
	close   sync.Once

	mu      sync.Mutex
	session string // Mcp-Session-Id from the initialize answer; "" for a stateless server
	version string // negotiated protocol version; "" before the handshake
	expired bool   // the server said the session is gone: nothing to DELETE
	closed  bool   // Close began: no new goroutine joins wg
	// modern: 2026-07-28 requests (Mcp-Method, Mcp-Name, Mcp-Param-*
	// headers; no session, no resumption). bindings are a tool's
	// x-mcp-header bindings, by the tool's name.
	modern   bool
	bindings func(tool string) []wire.Binding

	// lineHint is the last big line's length, shared by the readers of
	// every answer's stream (sseReader.hint).
	lineHint atomic.Int64
}

// setModern switches the connection to the 2026-07-28 wire (every
// request carries MCP-Protocol-Version 2026-07-28 and the Mcp-* headers,
// a call given up is its POST closed) or back to the 2025 one before any
// initialize. bindings may be nil.
func (c *httpConn) setModern(on bool, bindings func(tool string) []wire.Binding) {
	c.mu.Lock()
	c.modern, c.bindings = on, bindings
	c.version = ""
	if on {
		c.version = wire.Revision20260728
	}
	c.mu.Unlock()
	c.cancelByClose.Store(on)
}

// modernHeaders sets a 2026-07-28 request's Mcp-Method, Mcp-Name and
// Mcp-Param-* headers from the message it carries.
func (c *httpConn) modernHeaders(req *http.Request, method string, params json.RawMessage) {
	c.mu.Lock()
	bindings := c.bindings
	c.mu.Unlock()
	var b []wire.Binding
	if method == "tools/call" && bindings != nil {
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(params, &p)
		b = bindings(p.Name)
	}
	for k, v := range wire.HeadersFor(method, params, b) {
		req.Header[k] = v
	}
}

// spawn runs f on a goroutine that Close waits for, unless Close began;
// it reports whether f runs.
func (c *httpConn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// dialHTTP prepares a connection to rawURL. Nothing is sent until the
// first message (initialize), so an unreachable server fails that call.
// ctx bounds the connection's life.
func dialHTTP(ctx context.Context, hc *http.Client, name, rawURL string, headers map[string]string, h handlers, log *slog.Logger) (*httpConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Parse's error quotes the whole URL, secrets and all.
		return nil, fmt.Errorf("upstream %q: url does not parse", name)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("upstream %q: url %s: want http or https", name, config.RedactURL(rawURL))
	}
	c := &httpConn{url: rawURL, headers: headers, hc: hc}
	c.peer = newPeer(name, h, log, c.send)
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	context.AfterFunc(c.ctx, func() { c.fail(fmt.Errorf("%w: %w", ErrUpstreamExited, context.Cause(c.ctx))) })
	c.spawn(c.deliver)
	return c, nil
}

// negotiated makes every later request carry the protocol version, as
// the specification asks.
func (c *httpConn) negotiated(version string) {
	c.mu.Lock()
	c.version = version
	c.mu.Unlock()
}

// initialized opens the listening stream.
func (c *httpConn) initialized() {
	c.spawn(c.listen)
}

// newRequest is a request to the upstream with the configured headers,
// the session id and the protocol version.
func (c *httpConn) newRequest(ctx context.Context, method string, body []byte) (*http.Request, string, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url, r)
	if err != nil {
		return nil, "", err
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	c.mu.Lock()
	session, version := c.session, c.version
	c.mu.Unlock()
	if session != "" {
		req.Header.Set(headerSession, session)
	}
	if version != "" {
		req.Header.Set(headerProtocolVersion, version)
	}
	return req, session, nil
}

// expire ends the connection because the server no longer knows its
// session, and returns the error saying so.
func (c *httpConn) expire(what, session string) error {
	err := fmt.Errorf("%w: upstream %q answered 404 to %s in session %s", ErrSessionExpired, c.name, what, session)
	c.mu.Lock()
	c.expired = true
	c.mu.Unlock()
	c.fail(err)
	c.cancel(err)
	return err
}

// lost ends the connection because the server could not be reached, and
// returns the error saying so: the supervisor reconnects, and calls wait
// for it instead of each failing on its own.
func (c *httpConn) lost(what string, err error) error {
	err = fmt.Errorf("upstream %q: %s %s: %w", c.name, what, config.RedactURL(c.url), err)
	c.fail(fmt.Errorf("%w: %w", ErrUpstreamExited, err))
	c.cancel(err)
	return err
}

// send POSTs one message. A response to a request comes back as JSON,
// dispatched before send returns, or as an event stream read on a
// goroutine of its own until the response came; ctx (the caller's) ends
// that stream too.
func (c *httpConn) send(ctx context.Context, msg []byte) error {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &head)
	c.mu.Lock()
	modern := c.modern
	c.mu.Unlock()
	var waitFor json.RawMessage // the id whose response this POST may carry
	if head.Method != "" && len(head.ID) > 0 {
		waitFor = head.ID
	}
	rctx, rcancel := context.WithCancelCause(c.ctx)
	stop := context.AfterFunc(ctx, func() { rcancel(context.Cause(ctx)) })
	end := func() { stop(); rcancel(nil) }
	req, session, err := c.newRequest(rctx, http.MethodPost, msg)
	if err != nil {
		end()
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if modern && head.Method != "" {
		// Only a 2026-07-28 request copies its params out (its headers
		// repeat some of them).
		var p struct {
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(msg, &p)
		c.modernHeaders(req, head.Method, p.Params)
	}
	// A server that restarted closed the kept-alive connection this POST
	// may be sent on; net/http retries on a fresh connection only a
	// request it may replay. An empty idempotency key marks it so without
	// sending the header: the retry happens only when the reused
	// connection failed before any answer, so the old server never
	// answered it.
	req.Header["X-Idempotency-Key"] = nil
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(true) },
	}))
	resp, err := do(c.hc, req)
	if err != nil {
		end()
		switch {
		case c.ctx.Err() != nil && !wrote.Load():
			// The connection ended (the listening stream found the
			// server gone) before any of this request was written.
			return fmt.Errorf("%w: %w", errConnEnded, c.endedErr())
		case c.ctx.Err() != nil:
			return c.endedErr()
		case ctx.Err() != nil:
			return ctx.Err()
		case isDialError(err):
			return c.lost("POST", err)
		}
		// One request's connection failed (a pooled one the server
		// closed, a reset): this call fails, the others go on.
		return fmt.Errorf("upstream %q: POST %s: %w", c.name, config.RedactURL(c.url), err)
	}
	if resp.StatusCode == http.StatusNotFound && session != "" {
		resp.Body.Close()
		end()
		return c.expire(head.Method+" "+string(head.ID), session)
	}
	if rerr := rpcErrorBody(resp); rerr != nil && waitFor != nil {
		// A 4xx/5xx whose body is a JSON-RPC error (a 2026-07-28 server's
		// -32020..-32022, 404 -32601; a 2025 one refusing initialize):
		// that is the call's answer, code, message and data.
		resp.Body.Close()
		end()
		c.abandon(waitFor, rerr)
		return nil
	}
	if err := httpStatusError(resp); err != nil {
		resp.Body.Close()
		end()
		return fmt.Errorf("upstream %q: POST %s: %w", c.name, config.RedactURL(c.url), err)
	}
	if head.Method == "initialize" {
		c.mu.Lock()
		c.session = resp.Header.Get(headerSession)
		c.mu.Unlock()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		if !c.spawn(func() {
			defer end()
			c.readAnswer(rctx, resp.Body, waitFor)
		}) {
			resp.Body.Close()
			end()
			return c.endedErr()
		}
		return nil
	case mt == "application/json":
		defer end()
		defer resp.Body.Close()
		// Validated as it is read, so that when its end is in only the
		// last read is left to check.
		scan := &scanReader{r: resp.Body, s: messageStream()}
		body, err := c.readBody(resp, scan)
		if tl, ok := err.(*TooLargeError); ok && head.ID != nil {
			c.abandon(head.ID, tl)
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("upstream %q: reading the answer to %s: %w", c.name, head.Method, err)
		}
		c.dispatchBody(body, scan.s)
		return nil
	case modern && waitFor != nil:
		// No listening stream in 2026-07-28: a request's answer is in
		// its POST's answer or nowhere (an HTML page from a proxy).
		defer end()
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		c.abandon(waitFor, fmt.Errorf("%w: upstream %q answered %s with HTTP %d and Content-Type %q", ErrInvalidResponse, c.name, head.Method, resp.StatusCode, resp.Header.Get("Content-Type")))
		return nil
	default:
		// 202 Accepted for notifications and responses; a request's
		// answer may still come on the listening stream.
		defer end()
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil
	}
}

// readBody reads a JSON answer, in one allocation when its length is
// known, and refuses one over max_result_bytes without reading it.
func (c *httpConn) readBody(resp *http.Response, body io.Reader) ([]byte, error) {
	limit := int64(c.h.maxMessage)
	if limit <= 0 {
		limit = math.MaxInt64 - 1
	}
	if n := resp.ContentLength; n > limit {
		return nil, &TooLargeError{Size: n, Max: limit}
	} else if n > 0 {
		b := make([]byte, n)
		_, err := io.ReadFull(body, b)
		return b, err
	}
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err == nil && int64(len(b)) > limit {
		n, _ := io.Copy(io.Discard, resp.Body)
		return nil, &TooLargeError{Size: int64(len(b)) + n, Max: limit}
	}
	return b, err
}

// scanReader validates what it reads (jsonscan.Stream) as it reads it.
type scanReader struct {
	r io.Reader
	s *jsonscan.Stream
}

func (r *scanReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	_, _ = r.s.Write(p[:n])
	return n, err
}

// dispatchBody dispatches a JSON answer: one message or a batch of them.
// scan has validated body as it was read.
func (c *httpConn) dispatchBody(body []byte, scan *jsonscan.Stream) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		c.dispatchScanned(body, closeScan(scan))
		return
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) == nil {
			for _, m := range batch {
				c.dispatch(m)
			}
			return
		}
	}
	if len(trimmed) > 0 {
		c.dispatch(trimmed)
	}
}

// endedErr is why the connection ended, for a request it cut off.
func (c *httpConn) endedErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUpstreamExited, context.Cause(c.ctx))
}

// readAnswer reads a POST's event stream until the response to id came.
// If the stream breaks first, it is resumed with GET and Last-Event-ID
// (after the server's retry time), as often as [maxResumes]; a stream that
// cannot be resumed fails the call.
func (c *httpConn) readAnswer(ctx context.Context, body io.ReadCloser, id json.RawMessage) {
	r := newSSEReader(body)
	r.max, r.hint = c.h.maxMessage, &c.lineHint
	got, err := c.readStream(r, id)
	body.Close()
	c.mu.Lock()
	modern := c.modern
	c.mu.Unlock()
	if !got && id != nil && modern && ctx.Err() == nil {
		// 2026-07-28 has no resumption: a broken stream fails the call
		// (it is not sent again: it may have run).
		c.abandon(id, fmt.Errorf("%w: upstream %q ended the event stream of its answer before the answer (%v)", ErrAnswerLost, c.name, err))
		return
	}
	for resumes := 0; !got && id != nil; resumes++ {
		if ctx.Err() != nil {
			return // the call was given up, or the connection ended: the peer knows
		}
		if r.lastID == "" || resumes == maxResumes {
			why := "it carried no event id to resume from"
			if r.lastID != "" {
				why = fmt.Sprintf("resumed %d times", resumes)
			}
			c.abandon(id, fmt.Errorf("%w: upstream %q ended the event stream of its answer before the answer (%v) and %s", ErrAnswerLost, c.name, err, why))
			return
		}
		if !sleep(ctx, r.retryOr(defaultRetry)) {
			return
		}
		var resp *http.Response
		resp, err = c.get(ctx, r.lastID)
		if err != nil {
			var se *statusError
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, ErrSessionExpired):
				return // the connection has failed with it; the peer fails the call
			case errors.As(err, &se), errors.Is(err, errNoListenStream):
				c.abandon(id, fmt.Errorf("%w: upstream %q: resuming the answer's event stream: %w", ErrUpstreamExited, c.name, err))
				return
			case isDialError(err):
				c.lost("GET", err)
				return
			}
			continue // another try, if resumes are left
		}
		r = r.resume(resp.Body)
		got, err = c.readStream(r, id)
		resp.Body.Close()
	}
}

// readStream dispatches the messages of an event stream until it ends
// or, when id is not nil, the response to id came.
func (c *httpConn) readStream(r *sseReader, id json.RawMessage) (gotResponse bool, err error) {
	for {
		ev, err := r.next()
		if err != nil {
			return false, err
		}
		if ev.name != "message" || len(bytes.TrimSpace(ev.data)) == 0 {
			continue
		}
		if ev.skipped != nil {
			if id != nil && idOf(ev.skipped.head, ev.skipped.tail) == nil {
				// The answer to this POST, most likely: nothing else is
				// that big.
				c.abandon(id, &TooLargeError{Size: ev.skipped.size, Max: int64(c.h.maxMessage)})
				return true, nil
			}
			c.skipped(ev.skipped)
			if rid := idOf(ev.skipped.head, ev.skipped.tail); id != nil && bytes.Equal(rid, id) {
				return true, nil
			}
			continue
		}
		var rid json.RawMessage
		if ev.scan != nil {
			rid = c.dispatchScannedOn(ev.data, ev.scan, id)
		} else {
			rid = c.dispatchOn(ev.data, id)
		}
		if id != nil && rid != nil && bytes.Equal(rid, id) {
			return true, nil
		}
	}
}

// get opens an event stream with GET, resuming after lastID when it is
// not empty.
func (c *httpConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	req, session, err := c.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	resp, err := do(c.hc, req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && session != "":
		resp.Body.Close()
		return nil, c.expire("GET", session)
	case resp.StatusCode == http.StatusMethodNotAllowed, resp.StatusCode == http.StatusNotFound:
		// 405 is the spec's "no stream here"; many servers without one
		// answer 404 (an HTML page) instead. Either way there is nothing
		// to retry, and the body says nothing the log needs.
		resp.Body.Close()
		return nil, fmt.Errorf("%w: GET answered %s", errNoListenStream, resp.Status)
	}
	if err := httpStatusError(resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: GET answered with Content-Type %q", errNoListenStream, resp.Header.Get("Content-Type"))
	}
	return resp, nil
}

// listen keeps the listening stream open for the connection's life: the
// server's requests and notifications that belong to no call arrive
// there. A stream that ends is reopened after the server's retry time
// with Last-Event-ID; a server that cannot be reached ends the
// connection (the supervisor reconnects); one that answers 404 has lost
// the session.
func (c *httpConn) listen() {
	r := newSSEReader(http.NoBody)
	r.max = c.h.maxMessage
	refused := 0
	for c.ctx.Err() == nil {
		resp, err := c.get(c.ctx, r.lastID)
		if err != nil {
			switch {
			case c.ctx.Err() != nil, errors.Is(err, ErrSessionExpired):
				return
			case errors.Is(err, errNoListenStream):
				// Said once: the stream is not asked for again on this
				// connection.
				c.log.Info("upstream offers no listening stream: its notifications and requests come only within calls", "reason", err)
				return
			case isDialError(err):
				c.lost("GET", err)
				return
			}
			// Refused with an error status, or the connection failed
			// (a proxy closing it): try again, backing off.
			refused++
			wait := min(r.retryOr(defaultRetry)<<min(refused, 5), maxListenBackoff)
			c.log.Warn("upstream's listening stream failed; retrying", "server", c.name, "error", err, "in", wait.String())
			if !sleep(c.ctx, wait) {
				return
			}
			continue
		}
		refused = 0
		r = r.resume(resp.Body)
		_, err = c.readStream(r, nil)
		resp.Body.Close()
		if c.ctx.Err() != nil {
			return
		}
		c.log.Debug("upstream's listening stream ended; reopening", "server", c.name, "error", err, "lastEventID", r.lastID)
		if !sleep(c.ctx, r.retryOr(defaultRetry)) {
			return
		}
	}
}

// isDialError reports whether err is a failure to connect (refused,
// unreachable, DNS, dial timeout): the server is not there, which is the
// end of the connection rather than of one request.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// sleep waits d unless ctx ends first; it reports whether it waited.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close ends the session (DELETE, bounded by [deleteTimeout]; a server
// that does not allow it answers 405, which is fine), every stream and
// request, and returns once the connection's goroutines have.
func (c *httpConn) Close() error {
	c.close.Do(func() {
		c.mu.Lock()
		session, expired := c.session, c.expired
		c.closed = true
		c.mu.Unlock()
		c.fail(fmt.Errorf("%w: closed", ErrUpstreamExited))
		if session != "" && !expired {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), deleteTimeout)
			if req, _, err := c.newRequest(ctx, http.MethodDelete, nil); err == nil {
				if resp, err := do(c.hc, req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		c.cancel(errors.New("closed"))
		c.wg.Wait()
		c.serving.Wait() // after the readers: nothing starts new ones
	})
	return nil
}
