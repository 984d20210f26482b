package intercept

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Output wraps the writer a stdio MCP server writes its messages to. What
// the server sends its client passes through it for two things mcp-go
// does not do by itself: an upstream's JSON-RPC error gets its own code
// and data back (mcp-go would send -32603), and the ids of requests
// forwarded to the client are noted, so that an upstream cancelling its
// request gets the client told. The server must write each message with a
// single Write, as mcp-go's stdio server does.
//
// It also carries the notifications the proxy forwards to the stdio
// client (progress, logging) itself, in order: mcp-go writes notifications
// from a goroutine of their own, so one sent just before a call's result
// could reach the client after it, and a client drops progress for a
// request it has its answer to.
func (r *Router) Output(w io.Writer) io.Writer {
	o := &output{r: r, w: w}
	r.mu.Lock()
	r.stdioOut = o
	r.mu.Unlock()
	return o
}

// stdioSession is the id of mcp-go's one stdio session.
const stdioSession = "stdio"

type output struct {
	r       *Router
	w       io.Writer
	session string // "" for stdio: one session

	mu sync.Mutex // one message at a time: mcp-go's and the proxy's own
}

func (o *output) Write(p []byte) (int, error) {
	out := restore(p)
	o.r.sent.observe(o.session, out)
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, err := o.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// notify writes a notification at once.
func (o *output) notify(method string, params any) error {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err = o.w.Write(append(b, '\n'))
	return err
}

// notifyDirect sends a notification to session through the stdio output
// when session is the stdio client; it reports whether it did.
func (r *Router) notifyDirect(session, method string, params any) bool {
	r.mu.RLock()
	o := r.stdioOut
	r.mu.RUnlock()
	var err error
	switch st := r.sse.stream(session); {
	case o != nil && session == stdioSession:
		err = o.notify(method, params)
	case st != nil:
		var b []byte
		if b, err = json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params}); err == nil {
			err = st.event(b)
		}
	default:
		return false
	}
	if err != nil {
		r.log.Debug("forwarding a notification failed", "method", method, "error", err)
	}
	return true
}

// notify sends an upstream's notification to a client session: written
// in order by the proxy where it can (stdio, legacy SSE), otherwise
// through mcp-go, counted so that the call's answer waits for it (see
// pendingNotes).
func (r *Router) notify(srv *server.MCPServer, session string, method string, params map[string]any) {
	if r.notifyDirect(session, method, params) {
		return
	}
	r.notes.add(session, 1)
	if err := srv.SendNotificationToSpecificClient(session, method, params); err != nil {
		r.notes.add(session, -1)
		r.log.Debug("forwarding a notification failed", "method", method, "error", err)
	}
}

// OutputHTTP is [Router.Output] for an HTTP MCP handler (streamable HTTP
// or SSE): every response body written through it, JSON or event stream,
// is handled. Protocol 2026-07-28 also maps an error's code onto the HTTP
// status of a JSON answer; for such a request the status waits for the
// body, so that it follows the restored code. For legacy SSE sessions it
// also carries the proxy's own requests to the client and their answers
// (see sseFront).
func (r *Router) OutputHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.sse.interceptAnswer(w, req) {
			return
		}
		rw := &outputResponse{ResponseWriter: w,
			out:    output{r: r, w: w, session: req.Header.Get(server.HeaderKeySessionID)},
			modern: mcp.IsModernProtocol(req.Header.Get(mcp.HeaderProtocolVersion))}
		h.ServeHTTP(rw, req)
		rw.mu.Lock()
		rw.release()
		rw.closed = true
		rw.mu.Unlock()
		if rw.sseSession != "" {
			r.sse.detach(rw.sseSession, rw)
		}
	})
}

type outputResponse struct {
	http.ResponseWriter
	out    output
	modern bool

	// mu orders the handler's writes and the proxy's own events on a
	// legacy SSE stream.
	mu         sync.Mutex
	held       int // a status not yet written, waiting for the body
	wrote      bool
	closed     bool   // the handler returned: the stream is gone
	sseSession string // set when this is a legacy SSE session's stream
}

func (r *outputResponse) WriteHeader(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wrote || r.held != 0 {
		return
	}
	if r.modern && status == http.StatusOK && r.Header().Get("Content-Type") == "application/json" {
		r.held = status
		return
	}
	r.wrote = true
	r.ResponseWriter.WriteHeader(status)
}

// release writes a held status. r.mu is held.
func (r *outputResponse) release() {
	if r.held != 0 && !r.wrote {
		r.wrote = true
		r.ResponseWriter.WriteHeader(r.held)
	}
}

func (r *outputResponse) Write(p []byte) (int, error) {
	out := restore(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.wrote && r.sseSession == "" {
		// mcp-go's SSE stream starts with its endpoint event, which
		// names the session.
		if id, ok := sessionOfEndpoint(out); ok {
			r.sseSession = id
			r.out.session = id
			r.out.r.sse.attach(id, r)
		}
	}
	r.out.r.sent.observe(r.out.session, out)
	r.out.r.notes.seen(r.out.session, out)
	if r.held != 0 && !r.wrote {
		if len(out) != len(p) {
			var m struct {
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal(out, &m) == nil && m.Error != nil {
				r.held = modernStatus(m.Error.Code)
			}
		}
		r.release()
	}
	r.wrote = true
	if _, err := r.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// event writes msg to the stream as a message event and flushes it.
func (r *outputResponse) event(msg []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errNoStream
	}
	if _, err := fmt.Fprintf(r.ResponseWriter, "event: message\ndata: %s\n\n", msg); err != nil {
		return fmt.Errorf("%w: %v", errNoStream, err)
	}
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// modernStatus is the HTTP status protocol 2026-07-28 gives a JSON-RPC
// error answered as JSON.
func modernStatus(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// Flush keeps event streams streaming.
func (r *outputResponse) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.release()
	r.wrote = true
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets [http.ResponseController] reach the connection (deadlines).
func (r *outputResponse) Unwrap() http.ResponseWriter { return r.ResponseWriter }
