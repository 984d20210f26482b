package intercept

import (
	"context"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// sessions tracks what the proxy must know about its client sessions:
// which exist (log delivery), the level each asked for, the resources
// each subscribed to, and which calls are in flight on which upstream
// (where an upstream's sampling, elicitation and roots requests go).
type sessions struct {
	mu     sync.Mutex
	all    map[string]server.ClientSession
	levels map[string]mcp.LoggingLevel
	subs   map[string]map[string]bool // exposed URI → session ids
	seq    uint64
	calls  map[*Upstream][]caller
	urls   map[string]string // URL-mode elicitationId → session id
}

// caller is one client request in flight on an upstream. ctx is the
// request's own context: it carries the session and ends with the call.
type caller struct {
	seq uint64
	ctx context.Context
}

func newSessions() *sessions {
	return &sessions{
		all:    map[string]server.ClientSession{},
		levels: map[string]mcp.LoggingLevel{},
		subs:   map[string]map[string]bool{},
		calls:  map[*Upstream][]caller{},
		urls:   map[string]string{},
	}
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

func (s *sessions) add(cs server.ClientSession) {
	s.mu.Lock()
	s.all[cs.SessionID()] = cs
	s.mu.Unlock()
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
func (s *sessions) setLevel(id string, level mcp.LoggingLevel) mcp.LoggingLevel {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.levels[id] = level
	return s.minLevelLocked()
}

func (s *sessions) minLevelLocked() mcp.LoggingLevel {
	var min mcp.LoggingLevel
	for _, l := range s.levels {
		if min == "" || levelRank(l) < levelRank(min) {
			min = l
		}
	}
	return min
}

// logTargets lists the sessions a log message at level goes to: every
// session that set no level, and those whose level it reaches.
func (s *sessions) logTargets(level mcp.LoggingLevel) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.all {
		if want, ok := s.levels[id]; ok && levelRank(level) < levelRank(want) {
			continue
		}
		out = append(out, id)
	}
	return out
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

func (s *sessions) subscribers(uri string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.subs[uri]))
	for id := range s.subs[uri] {
		out = append(out, id)
	}
	return out
}

// begin records a client request in flight on u until the returned
// function is called.
func (s *sessions) begin(u *Upstream, ctx context.Context) (end func()) {
	s.mu.Lock()
	s.seq++
	c := caller{seq: s.seq, ctx: ctx}
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

// caller picks the client request an upstream's own request belongs to:
// the most recent one still in flight on that upstream. MCP does not say
// which call a server-to-client request serves, and upstreams are shared,
// so with calls from two sessions in flight at once the latest wins.
func (s *sessions) caller(u *Upstream) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.calls[u]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].ctx.Err() == nil {
			return list[i].ctx, true
		}
	}
	return nil, false
}

// only returns the one client session when exactly one is connected and
// initialized, and how many there are. pending is true when the one
// session is still initializing.
func (s *sessions) only() (cs server.ClientSession, n int, pending bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 1 {
		for _, cs := range s.all {
			if cs.Initialized() {
				return cs, 1, false
			}
			return nil, 1, true
		}
	}
	return nil, len(s.all), false
}

// onlyWait is [sessions.only], waiting up to max for a session that is
// still initializing: an upstream asks for roots as soon as the proxy has
// initialized it, which under Options.StartOnFirstClient is while the
// client's own initialize is being answered.
func (s *sessions) onlyWait(ctx context.Context, max time.Duration) (server.ClientSession, int) {
	deadline := time.Now().Add(max)
	for {
		cs, n, pending := s.only()
		if !pending || time.Now().After(deadline) {
			return cs, n
		}
		select {
		case <-ctx.Done():
			return nil, n
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// levelRank orders MCP logging levels from most to least verbose; an
// unknown level ranks as info.
func levelRank(l mcp.LoggingLevel) int {
	switch l {
	case mcp.LoggingLevelDebug:
		return 0
	case mcp.LoggingLevelInfo:
		return 1
	case mcp.LoggingLevelNotice:
		return 2
	case mcp.LoggingLevelWarning:
		return 3
	case mcp.LoggingLevelError:
		return 4
	case mcp.LoggingLevelCritical:
		return 5
	case mcp.LoggingLevelAlert:
		return 6
	case mcp.LoggingLevelEmergency:
		return 7
	}
	return 1
}
