package server

import (
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
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// sseHandler serves the legacy HTTP+SSE transport (GET opens a session's
// event stream, POSTs to its endpoint carry the client's messages). Both
// the handler and the transport are ours rather than go-sdk's: a session
// belongs to the owner whose request opened it, and a POST naming it with
// another owner's token is answered 404, as for a session that does not
// exist (go-sdk's handler takes any POST that names a session id); the
// client's request ids go back as sent (ids.go); and go-sdk's transport
// refuses, with a 400 before any server code runs, every method it does
// not know itself, so the skills extension's methods never reached the
// server over SSE.
type sseHandler struct {
	s *Server

	mu       sync.Mutex
	sessions map[string]*sseSession
}

type sseSession struct {
	t     *sseTransport
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
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, "failed to parse body", http.StatusBadRequest)
		return
	}
	// Request ids go to go-sdk as it answers them exactly (ids.go).
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
	// What go-sdk's session does not serve it answers as a JSON-RPC
	// error on the stream, as over every other transport.
	select {
	case se.t.in <- ps[0].msg:
		w.WriteHeader(http.StatusAccepted)
		return
	case <-se.t.done:
		http.Error(w, "session closed", http.StatusBadRequest)
	case <-r.Context().Done():
	}
	se.ids.forget([]jsonrpc.Message{ps[0].msg}) // not delivered: no one will answer it
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
	ids := &callIDs{}
	t := &sseTransport{endpoint: endpoint.RequestURI(), in: make(chan jsonrpc.Message, sseInbox), done: make(chan struct{}), ids: ids, w: sw}
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
	ss, err := se.mcp.Connect(r.Context(), t, nil)
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

// sseInbox bounds the messages POSTed to a session that its server has
// not read yet: a POST past it waits for room (or its client to go).
const sseInbox = 100

// sseTransport is one legacy SSE session's [mcp.Transport]: the messages
// POSTed to its endpoint come in on in (decoded, strict-checked and their
// ids noted by [sseHandler.post]); every message out is one "message"
// event on the GET's stream (w), a response under the id the client sent.
type sseTransport struct {
	endpoint string
	in       chan jsonrpc.Message
	done     chan struct{}
	once     sync.Once
	ids      *callIDs
	w        *sseWriter
}

// Connect sends the client the endpoint its messages are POSTed to.
func (t *sseTransport) Connect(context.Context) (mcp.Connection, error) {
	if err := t.w.send("endpoint", []byte(t.endpoint)); err != nil {
		return nil, err
	}
	return &sseConn{t: t}, nil
}

// SupportsProtocolVersion: the HTTP+SSE transport is 2025's; 2026-07-28
// defines stdio and streamable HTTP only.
func (t *sseTransport) SupportsProtocolVersion(v string) bool { return v < wire.Revision20260728 }

// sseConn is an [sseTransport]'s [mcp.Connection].
type sseConn struct{ t *sseTransport }

func (c *sseConn) SessionID() string { return "" }

// Read is the next message POSTed, each request noted by the client's
// ids (ids.go).
func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.t.in:
		c.t.ids.read(msg)
		return msg, nil
	case <-c.t.done:
		return nil, io.EOF
	}
}

// Write sends msg as one event; a response goes under the id the client
// sent.
func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		sent, _ := c.t.ids.answered(resp.ID) // nil: encoded as it is
		data, err = encodeResponse(resp, sent)
	} else {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return err
	}
	return c.t.w.event(data)
}

// Close ends the session's input: Read returns io.EOF, POSTs are refused.
func (c *sseConn) Close() error {
	c.t.once.Do(func() { close(c.t.done) })
	return nil
}

// sseWriter is the GET's response, written by the session's connection
// (sseConn): one lock, and no write once the GET is over.
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

// event writes one message event.
func (s *sseWriter) event(data []byte) error { return s.send("message", data) }

// send writes one event named name.
func (s *sseWriter) send(name string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return io.EOF
	}
	b := make([]byte, 0, len(data)+len(name)+len("event: \ndata: \n\n"))
	b = append(append(append(append(append(b, "event: "...), name...), "\ndata: "...), data...), "\n\n"...)
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
