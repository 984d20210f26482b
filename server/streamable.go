package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The streamable HTTP transport's server side is our own, not go-sdk's
// StreamableHTTPHandler. go-sdk's builds each session's connection
// itself and encodes every message it writes, so a forwarded result went
// through encoding/json twice (validated and copied each time: ~150 ms
// per 24 MB on this project's machine) and was copied twice more before
// reaching the socket; there is no hook to hand it bytes. Here a session
// is a go-sdk server session on an [httpConn], which writes a forwarded
// result as the upstream's bytes, like the stdio connection does.
//
// What it serves (MCP 2025-11-25, "Streamable HTTP"): POST carries the
// client's messages, answered 202 when there is no request among them,
// else with an event stream that ends once each request is answered;
// GET opens the session's standalone stream; DELETE ends the session;
// Last-Event-ID resumes a stream from the event store. A request of the
// sessionless 2026-07-28 revision (its _meta envelope and version header
// say so) is served on the same endpoint without a session
// (rev20260728_http.go).

// DefaultMaxRequestBytes bounds a POST body when
// [StreamableHTTPOptions.MaxRequestBytes] is 0.
const DefaultMaxRequestBytes = 4 << 20

// httpHandler serves the streamable HTTP transport.
type httpHandler struct {
	s       *Server
	timeout time.Duration
	store   mcp.EventStore
	limit   int64
	grace   time.Duration // a left stream's calls run on this long ([StreamableHTTPOptions].ResumeWindow)

	maxAll, maxOwner int // session bounds (negative: none)

	mu       sync.Mutex
	sessions map[string]*httpSession
	perOwner map[string]int // live sessions by owner, and those being made
	making   int            // sessions being made, not yet in sessions
}

// httpSession is a session as the handler knows it.
type httpSession struct {
	conn *httpConn
	ss   *mcp.ServerSession
	se   *session

	mu    sync.Mutex
	posts int // POSTs being served: the idle timer runs only at 0
	timer *time.Timer
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.s.refuseForeignSession(w, r) {
		return
	}
	if frontdoor.RefuseRebound(w, r) {
		return
	}
	if v := r.Header.Get(wire.HeaderProtocolVersion); v != "" {
		if era, served := wire.EraOf(v); !served && era == wire.Era2025 {
			// A version that claims the modern era is the 2026-07-28
			// checks' to refuse (-32022, with the versions served).
			http.Error(w, fmt.Sprintf("Bad Request: unsupported protocol version %q (supported: %s)", v, strings.Join(wire.Served(), ", ")), http.StatusBadRequest)
			return
		}
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// session is the live session a request names, or an answer saying why
// there is none.
func (h *httpHandler) session(w http.ResponseWriter, r *http.Request) *httpSession {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		http.Error(w, fmt.Sprintf("Bad Request: %s requires an Mcp-Session-Id header", r.Method), http.StatusBadRequest)
		return nil
	}
	h.mu.Lock()
	hs := h.sessions[id]
	h.mu.Unlock()
	if hs == nil {
		hs = h.takeUp(r, id) // another replica's (replica_recover.go)
	}
	if hs == nil {
		http.Error(w, "session not found", http.StatusNotFound)
	}
	return hs
}

func (h *httpHandler) delete(w http.ResponseWriter, r *http.Request) {
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	// Answered at once: the session's calls are cancelled, and go-sdk's
	// close, which waits for them to return, goes on without the
	// client. The session is gone for the client from now on.
	hs.end(ErrSessionEnded)
	h.forget(hs)
	h.forgetRecord(hs.conn.id)
	h.publishEnd(hs.se.owner, hs.conn.id) // the other replicas' copies end too (replica_relay.go)
	w.WriteHeader(http.StatusNoContent)
}

// end ends the session: its calls' contexts first (go-sdk's close waits
// for the calls in flight), then the session, in the background.
func (hs *httpSession) end(why error) {
	hs.se.stop(why)
	go func() { _ = hs.ss.Close() }()
}

// forget removes hs from the live sessions, once, and gives its owner's
// place back.
func (h *httpHandler) forget(hs *httpSession) {
	h.mu.Lock()
	gone := h.sessions[hs.conn.id] == hs
	if gone {
		delete(h.sessions, hs.conn.id)
		h.release(hs.se.owner)
	}
	h.mu.Unlock()
	if gone {
		h.unclaim(hs.se.owner, hs.conn.id) // replica_claims.go
	}
}

func (h *httpHandler) get(w http.ResponseWriter, r *http.Request) {
	if _, sse := accepts(r.Header.Values("Accept")); !sse {
		http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
		return
	}
	hs := h.session(w, r)
	if hs == nil {
		return
	}
	stream, last, resumed := "", -1, false
	if v := r.Header.Values("Last-Event-ID"); len(v) > 0 {
		var ok bool
		if stream, last, ok = parseEventID(v[0]); !ok {
			http.Error(w, fmt.Sprintf("malformed Last-Event-ID %q", v[0]), http.StatusBadRequest)
			return
		}
		if h.store == nil {
			http.Error(w, "stream replay unsupported", http.StatusBadRequest)
			return
		}
		resumed = true
		if stream != "" && h.replicated() && !hs.conn.holds(r.Context(), stream, last) {
			h.resumeElsewhere(w, r, hs, stream, last) // replica_resume.go
			return
		}
	}
	s, release, status, err := hs.conn.attach(r.Context(), w, stream, last, resumed)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	if s == nil {
		return // replayed a stream that is over
	}
	defer s.leave(w)
	// What other replicas' copies of the session send it (replica_relay.go).
	defer h.listenStream(r.Context(), hs)()
	h.hang(r, hs.conn, release)
}

// hang holds a response open until its stream lets it go, the client
// leaves or the session ends.
func (h *httpHandler) hang(r *http.Request, c *httpConn, release chan struct{}) {
	select {
	case <-release:
	case <-r.Context().Done():
	case <-c.done:
	}
}

func (h *httpHandler) post(w http.ResponseWriter, r *http.Request) {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	if jsonOK, sse := accepts(r.Header.Values("Accept")); !jsonOK || !sse {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		http.Error(w, "can't send Last-Event-ID for POST request", http.StatusBadRequest)
		return
	}
	body, ok := readBody(w, r, h.limit)
	if !ok {
		return
	}
	if refuseKeys(w, body) {
		return
	}
	if h.take20260728(w, r, body) {
		return // a 2026-07-28 request (rev20260728_http.go)
	}
	in, batch, err := readMessages(body)
	if err != nil {
		http.Error(w, fmt.Sprintf("malformed payload: %v", err), http.StatusBadRequest)
		return
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = "2025-03-26" // the spec's assumption for a client that does not say
	}
	if batch && version >= "2025-06-18" {
		http.Error(w, fmt.Sprintf("JSON-RPC batching is not supported in 2025-06-18 and later (request version: %s)", version), http.StatusBadRequest)
		return
	}

	initialize := false
	tokens := auth.TokenInfoFromContext(r.Context())
	for _, m := range in {
		req, ok := m.msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		req.Extra = &mcp.RequestExtra{TokenInfo: tokens, Header: r.Header}
		if req.Method == "initialize" {
			initialize = true
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.ProtocolVersion != "" {
				version = p.ProtocolVersion
			}
		}
	}

	hs, created := (*httpSession)(nil), false
	if r.Header.Get("Mcp-Session-Id") != "" {
		if hs = h.session(w, r); hs == nil {
			return
		}
	} else {
		if hs, err = h.create(r); err != nil {
			if errors.Is(err, state.ErrUnavailable) {
				// The message names [cluster] redis_url, never its password.
				h.s.log.Warn("session refused", "owner", ownerOf(r), "error", err)
				w.Header().Set("Retry-After", "5")
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			if errors.Is(err, ErrTooManySessions) {
				h.s.log.Warn("session refused", "owner", ownerOf(r), "error", err)
				h.s.opts.Telemetry.Refused(r.Context(), "sessions", ownerOf(r))
				w.Header().Set("Retry-After", "30")
				http.Error(w, err.Error(), http.StatusTooManyRequests)
				return
			}
			h.s.log.Error("creating a session failed", "error", err)
			http.Error(w, "creating the session failed", http.StatusInternalServerError)
			return
		}
		created = true
		// A session the client was never told of (no initialize, e.g.
		// a 2026-07-28 client's server/discover) ends with this POST.
		defer func() {
			if hs.ss.InitializeParams() == nil {
				_ = hs.ss.Close()
			}
		}()
	}
	hs.busy(h.timeout)
	defer hs.idle(h.timeout)
	// Its record renewed for other replicas (replica_recover.go).
	defer h.renew(r.Context(), hs)

	// The ids go-sdk is to see, and answers under the client's (ids.go).
	ps, err := hs.conn.ids.inbound(in, nil)
	var ie *idError
	if errors.As(err, &ie) {
		writeJSON(w, http.StatusBadRequest, ie.response())
		return
	}
	var msgs []jsonrpc.Message
	var calls []*jsonrpc.Request
	for _, p := range ps {
		msgs = append(msgs, p.msg)
		if req, ok := p.msg.(*jsonrpc.Request); ok && req.IsCall() {
			calls = append(calls, req)
		}
	}
	if len(calls) > 0 && h.s.refuseDraining(w) {
		hs.conn.ids.forget(msgs)
		return // new work, while the server drains; answers and notifications still go in
	}
	if len(calls) == 0 {
		for _, m := range msgs {
			if !hs.conn.push(m) {
				http.Error(w, "session is closing", http.StatusNotFound)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// The stream's features are the session's: a client that names an
	// older version in a header (some send 2025-03-26 on every request)
	// still negotiated resumable streams at initialize.
	if ip := hs.ss.InitializeParams(); ip != nil && ip.ProtocolVersion > version && ip.ProtocolVersion < wire.Revision20260728 {
		version = ip.ProtocolVersion
	}
	s, dup, err := hs.conn.open(r.Context(), rand.Text(), version, calls)
	if s == nil {
		hs.conn.ids.forget(msgs)
	}
	switch {
	case errors.Is(err, errSessionClosed):
		http.Error(w, "session is closing", http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	case s == nil:
		writeRPCError(w, http.StatusBadRequest, dup, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("duplicate in-flight request ID %v", dup.Raw())})
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Connection", "keep-alive")
	if created && initialize {
		hd.Set("Mcp-Session-Id", hs.conn.id)
	}
	release := hs.conn.carry(r.Context(), s, w)
	defer s.leave(w)
	if h := httpPushing.Load(); h != nil {
		(*h)(r)
	}
	for _, m := range msgs {
		// Not abandoned when the client leaves: what it asked is
		// answered into the store, for it to resume.
		if !hs.conn.push(m) {
			return
		}
	}
	hs.conn.taken(s, w)
	h.hang(r, hs.conn, release)
}

// create starts a session for a POST that names none.
func (h *httpHandler) create(r *http.Request) (hs *httpSession, err error) {
	return h.make(r, rand.Text(), nil)
}

// make starts the session id for r's owner: a new one (st nil) or one
// taken up from another replica's record with st, its go-sdk state
// (initialized already).
func (h *httpHandler) make(r *http.Request, id string, st *mcp.ServerSessionState) (hs *httpSession, err error) {
	owner := ownerOf(r)
	if err := h.reserve(owner); err != nil {
		return nil, err
	}
	defer func() {
		h.mu.Lock()
		h.making--
		if err != nil {
			h.release(owner)
		}
		h.mu.Unlock()
	}()
	// Counted across the replicas too (replica_claims.go).
	if err := h.claim(r.Context(), owner, id, st != nil); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			h.unclaim(owner, id)
		}
	}()
	se, err := h.s.newSession(SessionInfo{ID: id, Request: r})
	if err != nil {
		return nil, err
	}
	se.wire = &rawWire{}
	c := newHTTPConn(se.id, h.store, se.wire)
	c.grace = h.grace
	c.log = h.s.log
	se.clientGone = c.clientGone
	se.ids, se.relates = &c.ids, true
	hs = &httpSession{conn: c, se: se}
	se.changed = func(ctx context.Context) { h.keep(ctx, hs) }
	ended, endListen := context.WithCancel(context.Background())
	if h.replicated() {
		c.relay = h.relayTo(owner, id)
	}
	c.onClose = func() {
		endListen()
		se.stop(ErrSessionEnded)
		h.forget(hs)
		hs.mu.Lock()
		if hs.timer != nil {
			hs.timer.Stop()
		}
		hs.mu.Unlock()
	}
	// The request's values (its token's identity) stay; its end does not
	// end the session.
	var so *mcp.ServerSessionOptions
	if st != nil {
		so = &mcp.ServerSessionOptions{State: st}
	}
	ss, err := se.mcp.Connect(context.WithoutCancel(r.Context()), c, so)
	if err != nil {
		return nil, err
	}
	hs.ss = ss
	h.mu.Lock()
	if prev := h.sessions[c.id]; prev != nil {
		// Two requests took the same session up at once: keep the first.
		// This one's onClose forgets nothing (the map holds prev) and
		// gives back the place reserved for it.
		h.release(owner)
		h.mu.Unlock()
		hs.end(ErrSessionEnded)
		return prev, nil
	}
	h.sessions[c.id] = hs
	h.mu.Unlock()
	if h.replicated() {
		h.listenEnd(ended, hs) // a DELETE on another replica ends this copy (replica_relay.go)
	}
	return hs, nil
}

// reserve counts a session about to be made for owner, or says which
// bound it would pass.
func (h *httpHandler) reserve(owner string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxAll > 0 && len(h.sessions)+h.making >= h.maxAll {
		return fmt.Errorf("%w: the server holds its limit of %d sessions; end one (DELETE) or try again later", ErrTooManySessions, h.maxAll)
	}
	if h.maxOwner > 0 && h.perOwner[owner] >= h.maxOwner {
		return fmt.Errorf("%w: this owner holds its limit of %d sessions; end one (DELETE) or try again later", ErrTooManySessions, h.maxOwner)
	}
	h.perOwner[owner]++
	h.making++
	return nil
}

// release uncounts one session of owner. The caller holds h.mu.
func (h *httpHandler) release(owner string) {
	if h.perOwner[owner]--; h.perOwner[owner] <= 0 {
		delete(h.perOwner, owner)
	}
}

// busy stops the idle timer while a POST is served.
func (hs *httpSession) busy(timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.posts++
	if hs.timer != nil {
		hs.timer.Stop()
	}
}

// idle starts the idle timer again once no POST is served.
func (hs *httpSession) idle(timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.posts--; hs.posts > 0 {
		return
	}
	if hs.timer == nil {
		hs.timer = time.AfterFunc(timeout, func() { hs.end(ErrSessionEnded) })
		return
	}
	hs.timer.Reset(timeout)
}

// readMessages decodes a POST body: one message, or a batch (an array),
// each with its id as sent.
func readMessages(body []byte) (msgs []inMsg, batch bool, err error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, false, errors.New("empty body")
	}
	if body[0] != '[' {
		m, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			return nil, false, err
		}
		return []inMsg{{m, messageID(body)}}, false, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(body, &raws); err != nil {
		return nil, true, err
	}
	if len(raws) == 0 {
		return nil, true, errors.New("empty batch")
	}
	for i, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, true, fmt.Errorf("batch element %d: %w", i, err)
		}
		msgs = append(msgs, inMsg{m, messageID(raw)})
	}
	return msgs, true, nil
}

// accepts reads Accept headers: JSON and event streams acceptable?
func accepts(values []string) (jsonOK, sse bool) {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				jsonOK, sse = true, true
			}
		}
	}
	return jsonOK, sse
}

// parseEventID reads "<stream>_<index>".
func parseEventID(id string) (stream string, index int, ok bool) {
	stream, n, found := strings.Cut(id, "_")
	if !found || strings.Contains(n, "_") {
		return "", 0, false
	}
	index, err := strconv.Atoi(n)
	if err != nil || index < 0 {
		return "", 0, false
	}
	return stream, index, true
}

// writeJSON answers a POST with a JSON-RPC message and an HTTP status.
func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(msg)
}

// writeRPCError answers a POST with a JSON-RPC error and an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: e})
	if err != nil {
		http.Error(w, e.Message, status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// readBody reads a POST's body up to limit bytes, or answers why it
// cannot (413 past the limit, 400 otherwise) and reports false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}
