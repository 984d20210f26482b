package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
)

// sseHandler serves the legacy HTTP+SSE transport (GET opens a session's
// event stream, POSTs to its endpoint carry the client's messages) with
// go-sdk's public SSEServerTransport. It is ours rather than go-sdk's
// SSEHandler for one reason: a session belongs to the owner whose request
// opened it, and a POST naming it with another owner's token is answered
// 404, as for a session that does not exist. (go-sdk's handler takes any
// POST that names a session id.)
type sseHandler struct {
	s *Server

	mu       sync.Mutex
	sessions map[string]*sseSession
}

type sseSession struct {
	t     *mcp.SSEServerTransport
	owner string
	ids   *callIDs // the client's request ids (ids.go)
}

// SSE returns the handler of the legacy HTTP+SSE transport: GET opens a
// session and its stream, POST ?sessionid= sends it a message.
func (s *Server) SSE() http.Handler {
	return &sseHandler{s: s, sessions: map[string]*sseSession{}}
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if frontdoor.RefuseRebound(w, r) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

func (h *sseHandler) post(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	id := r.URL.Query().Get("sessionid")
	if id == "" {
		http.Error(w, "sessionid must be provided", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	se := h.sessions[id]
	h.mu.Unlock()
	if se == nil || se.owner != ownerOf(r) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	body, ok := readBody(w, r, mcp.DefaultMaxRequestBodyBytes)
	if !ok {
		return
	}
	if refuseKeys(w, body) {
		return
	}
	// Request ids go to go-sdk as it answers them exactly (ids.go).
	var admitted []jsonrpc.Message
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		ps, err := se.ids.inbound([]inMsg{{msg, messageID(body)}}, nil)
		var ie *idError
		if errors.As(err, &ie) {
			writeJSON(w, http.StatusBadRequest, ie.response())
			return
		}
		if len(ps) == 0 {
			w.WriteHeader(http.StatusAccepted) // a cancellation of nothing go-sdk knows
			return
		}
		if ps[0].changed {
			if body, err = jsonrpc.EncodeMessage(ps[0].msg); err != nil {
				se.ids.forget([]jsonrpc.Message{ps[0].msg})
				http.Error(w, "failed to parse body", http.StatusBadRequest)
				return
			}
		}
		admitted = []jsonrpc.Message{ps[0].msg}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	sw := &statusWriter{ResponseWriter: w}
	se.t.ServeHTTP(sw, r)
	if sw.status != http.StatusAccepted {
		se.ids.forget(admitted) // refused: go-sdk will not answer it
	}
}

// statusWriter notes the status a POST was answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (h *sseHandler) get(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	id := rand.Text()
	endpoint, err := r.URL.Parse("?sessionid=" + id)
	if err != nil {
		http.Error(w, "internal error: failed to create endpoint", http.StatusInternalServerError)
		return
	}
	sw := &sseWriter{w: deadlineWriter{w, http.NewResponseController(w)}}
	defer sw.end()
	t := &mcp.SSEServerTransport{Endpoint: endpoint.RequestURI(), Response: sw}
	ids := &callIDs{}
	h.mu.Lock()
	h.sessions[id] = &sseSession{t: t, owner: ownerOf(r), ids: ids}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	se, err := h.s.newSession(SessionInfo{ID: rand.Text(), Request: r})
	if err != nil {
		h.s.log.Error("creating a session failed", "error", err)
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	se.ids = ids
	ss, err := se.mcp.Connect(r.Context(), &sseIDs{t: t, ids: ids, w: sw}, nil)
	if err != nil {
		http.Error(w, "connection failed", http.StatusInternalServerError)
		return
	}
	ended := make(chan struct{})
	go func() { _ = ss.Wait(); close(ended) }()
	select {
	case <-r.Context().Done():
		// The stream is the session: its client is gone, and nothing
		// can carry the answers of its calls any more.
		se.stop(ErrClientGone)
	case <-se.ctx.Done(): // shut down
	case <-ended:
	}
	// go-sdk's close waits for the calls in flight, which the session's
	// end has just cancelled.
	_ = ss.Close()
}

// deadlineWriter gives every write on a legacy SSE stream the deadline
// [writeEvent] gives streamable HTTP events: a client that stops reading
// loses its stream instead of holding the session's writer forever.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout + time.Duration(len(p)>>20)*time.Second))
	return d.ResponseWriter.Write(p)
}

func (d deadlineWriter) Flush() { _ = d.rc.Flush() }

// sseIDs is go-sdk's SSE transport whose responses carry the ids the
// client sent (ids.go).
type sseIDs struct {
	t   *mcp.SSEServerTransport
	ids *callIDs
	w   *sseWriter
}

func (t *sseIDs) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &sseConn{Connection: c, t: t}, nil
}

// SupportsProtocolVersion is go-sdk's transport's: the versions of the
// HTTP+SSE transport.
func (t *sseIDs) SupportsProtocolVersion(v string) bool { return t.t.SupportsProtocolVersion(v) }

type sseConn struct {
	mcp.Connection
	t *sseIDs
}

// Read is go-sdk's, each request noted by the client's ids (ids.go).
func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.t.ids.read(msg)
	}
	return msg, err
}

// Write sends a response under the id the client sent: go-sdk's
// connection would encode the id it knows, so one with a replaced id is
// written here, as go-sdk frames an event.
func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	msg = coded(msg)
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	sent, _ := c.t.ids.answered(resp.ID)
	if sent == nil {
		return c.Connection.Write(ctx, msg)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := encodeResponse(resp, sent)
	if err != nil {
		return err
	}
	return c.t.w.event(data)
}

// sseWriter is the GET's response, written by go-sdk's transport and by
// sseConn: one lock for both, and no write once the GET is over.
type sseWriter struct {
	w    http.ResponseWriter
	mu   sync.Mutex
	done bool
}

func (s *sseWriter) Header() http.Header { return s.w.Header() }
func (s *sseWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.w.WriteHeader(code)
	}
}

func (s *sseWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0, io.EOF
	}
	return s.w.Write(p)
}

// Flush is what go-sdk's transport calls after each event.
func (s *sseWriter) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		_ = http.NewResponseController(s.w).Flush()
	}
}

// event writes one message event, as go-sdk's transport frames it.
func (s *sseWriter) event(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return io.EOF
	}
	b := make([]byte, 0, len(data)+len("event: message\ndata: \n\n"))
	b = append(append(append(b, "event: message\ndata: "...), data...), "\n\n"...)
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(s.w).Flush()
}

// end stops writes: the GET's handler returns.
func (s *sseWriter) end() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}
