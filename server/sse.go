package server

import (
	"crypto/rand"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
}

// SSE returns the handler of the legacy HTTP+SSE transport: GET opens a
// session and its stream, POST ?sessionid= sends it a message.
func (s *Server) SSE() http.Handler {
	return &sseHandler{s: s, sessions: map[string]*sseSession{}}
}

func (h *sseHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if RefuseRebound(w, r) {
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
	if se == nil || se.owner != ownerOf(h.s.opts.Owner, r) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	se.t.ServeHTTP(w, r)
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
	t := &mcp.SSEServerTransport{Endpoint: endpoint.RequestURI(), Response: deadlineWriter{w, http.NewResponseController(w)}}
	h.mu.Lock()
	h.sessions[id] = &sseSession{t: t, owner: ownerOf(h.s.opts.Owner, r)}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()
	srv := h.s.serverFor(r)
	if srv == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	ss, err := srv.Connect(r.Context(), t, nil)
	if err != nil {
		http.Error(w, "connection failed", http.StatusInternalServerError)
		return
	}
	defer ss.Close() // ends the transport when the GET does
	ended := make(chan struct{})
	go func() { _ = ss.Wait(); close(ended) }()
	select {
	case <-r.Context().Done():
	case <-ended:
	}
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
