package proxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Session is one client session as the proxy sees it. The MCP server
// adapter implements it; the proxy never sees the MCP library's types.
type Session interface {
	// ID names the session uniquely among the live ones.
	ID() string
	// Capabilities is what the client declared at initialize.
	Capabilities() ClientCapabilities
	// Request sends the client a request (sampling/createMessage,
	// elicitation/create, roots/list) and returns its raw result. The
	// client's own JSON-RPC error comes back as an [*upstream.RPCError].
	// ctx ending cancels the request at the client.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// Notify sends a notification. ctx is the client request it belongs
	// to (progress travels on that request's stream), or a background
	// context for notifications that belong to none.
	Notify(ctx context.Context, method string, params json.RawMessage) error
}

// ClientCapabilities is what a client declared of what the proxy
// forwards to it.
type ClientCapabilities struct {
	Sampling, Elicitation, ElicitationURL, Roots bool
	// Extensions is what the client declared in capabilities.extensions,
	// by id (see [ClientCapabilities.Declares]).
	Extensions map[string]json.RawMessage
	// Raw is the client's "capabilities" object as sent, for mirroring
	// to upstreams ([MirrorOffer]).
	Raw json.RawMessage
}

// sessions tracks what the proxy must know about its client sessions:
// which exist, the logging level each asked for, the resources each
// subscribed to, and which calls are in flight on which upstream (where
// an upstream's sampling, elicitation and roots requests go).
type sessions struct {
	mu     sync.Mutex
	all    map[string]Session
	levels map[string]string
	subs   map[string]map[string]bool // exposed URI → session ids
	seq    uint64
	calls  map[*upstream.Upstream][]caller
	urls   map[string]string // URL-mode elicitationId → session id
	joined chan struct{}     // closed and replaced when a session attaches
}

// caller is one client request in flight on an upstream. ctx is the
// request's own context: it ends with the call.
type caller struct {
	seq  uint64
	ctx  context.Context
	sess Session
}

func newSessions() sessions {
	return sessions{
		all:    map[string]Session{},
		levels: map[string]string{},
		subs:   map[string]map[string]bool{},
		calls:  map[*upstream.Upstream][]caller{},
		urls:   map[string]string{},
		joined: make(chan struct{}),
	}
}

// Attach makes s known to the proxy once its client has initialized:
// from now on it receives log messages, and an upstream's request made
// outside any call may go to it.
func (p *Proxy) Attach(s Session) {
	ss := &p.sessions
	ss.mu.Lock()
	ss.all[s.ID()] = s
	close(ss.joined)
	ss.joined = make(chan struct{})
	ss.mu.Unlock()
}

// Detach forgets the session id: its subscriptions end (upstreams are
// told when no session is left on a URI) and its level no longer counts.
func (p *Proxy) Detach(id string) {
	orphaned := p.sessions.remove(id)
	if len(orphaned) == 0 {
		return
	}
	go func() {
		for _, uri := range orphaned {
			p.forwardSubscription(context.Background(), "resources/unsubscribe", uri)
		}
	}()
}

func (s *sessions) get(id string) Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all[id]
}

func (s *sessions) list() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, 0, len(s.all))
	for _, x := range s.all {
		out = append(out, x)
	}
	return out
}

// elicited remembers which session a URL-mode elicitation went to: its
// notifications/elicitation/complete goes there too.
func (s *sessions) elicited(elicitationID, session string) {
	s.mu.Lock()
	s.urls[elicitationID] = session
	s.mu.Unlock()
}

// completed returns and forgets the session of a URL-mode elicitation.
func (s *sessions) completed(elicitationID string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.urls[elicitationID]
	delete(s.urls, elicitationID)
	return id, ok
}

// remove forgets a session and returns the URIs no session is subscribed
// to any more.
func (s *sessions) remove(id string) (orphaned []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, id)
	delete(s.levels, id)
	for el, sid := range s.urls {
		if sid == id {
			delete(s.urls, el)
		}
	}
	for uri, ids := range s.subs {
		if ids[id] {
			delete(ids, id)
			if len(ids) == 0 {
				delete(s.subs, uri)
				orphaned = append(orphaned, uri)
			}
		}
	}
	return orphaned
}

// setLevel records a session's logging level and returns the most
// verbose level any session asked for: what the upstreams are told.
func (s *sessions) setLevel(id, level string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.levels[id] = level
	min := ""
	for _, l := range s.levels {
		if wire.MoreVerbose(l, min) {
			min = l
		}
	}
	return min
}

// subscribe records id's subscription to uri and reports whether it is
// the first one (the upstream must be told).
func (s *sessions) subscribe(uri, id string) (first bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.subs[uri]
	if ids == nil {
		ids = map[string]bool{}
		s.subs[uri] = ids
	}
	first = len(ids) == 0
	ids[id] = true
	return first
}

// unsubscribe drops id's subscription and reports whether it was the
// last one.
func (s *sessions) unsubscribe(uri, id string) (last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.subs[uri]
	if !ids[id] {
		return false
	}
	delete(ids, id)
	if len(ids) == 0 {
		delete(s.subs, uri)
		return true
	}
	return false
}

func (s *sessions) subscribers(uri string) []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, 0, len(s.subs[uri]))
	for id := range s.subs[uri] {
		if x := s.all[id]; x != nil {
			out = append(out, x)
		}
	}
	return out
}

// begin records a client request in flight on u until the returned
// function is called.
func (s *sessions) begin(u *upstream.Upstream, ctx context.Context, sess Session) (end func()) {
	s.mu.Lock()
	s.seq++
	c := caller{seq: s.seq, ctx: ctx, sess: sess}
	s.calls[u] = append(s.calls[u], c)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		list := s.calls[u]
		for i := range list {
			if list[i].seq == c.seq {
				s.calls[u] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(s.calls[u]) == 0 {
			delete(s.calls, u)
		}
	}
}

// unattached returns the client requests in flight on u whose session
// is not attached: 2026-07-28 requests, each its own session, which get
// u's log messages on their answer (notify.go). Attached sessions get
// them as sessions.
func (s *sessions) unattached(u *upstream.Upstream) []caller {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []caller
	for _, c := range s.calls[u] {
		if _, attached := s.all[c.sess.ID()]; !attached && c.ctx.Err() == nil {
			out = append(out, c)
		}
	}
	return out
}

// caller returns the most recent client request still in flight on u
// and how many client sessions have requests in flight on it: the
// request only says which call it serves when they are all one
// session's.
func (s *sessions) caller(u *upstream.Upstream) (latest caller, sessions int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.calls[u]
	seen := map[string]bool{}
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].ctx.Err() != nil {
			continue
		}
		if len(seen) == 0 {
			latest = list[i]
		}
		seen[list[i].sess.ID()] = true
	}
	return latest, len(seen)
}

// onlyWait returns the one client session when exactly one is attached,
// waiting up to max for one to attach when none has: an upstream asks
// for roots as soon as it is initialized, which over stdio is while the
// client's own initialize is being answered. n is how many are attached.
func (s *sessions) onlyWait(ctx context.Context, max time.Duration) (only Session, n int) {
	timer := time.NewTimer(max)
	defer timer.Stop()
	for {
		s.mu.Lock()
		n = len(s.all)
		if n == 1 {
			for _, x := range s.all {
				only = x
			}
		}
		joined := s.joined
		s.mu.Unlock()
		if n > 0 {
			return only, n
		}
		select {
		case <-ctx.Done():
			return nil, 0
		case <-timer.C:
			return nil, 0
		case <-joined:
		}
	}
}
