package server

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// A 2026-07-28 request has no session: who sends it is what it carries
// (the bearer token's owner, the identity headers, or the stdio process).
// agent20260728 is what one such caller holds from request to request —
// its own tools, resources and prompts, its owner's proxy — made at its
// first request and ended when it has been idle for a while, which ends
// its agent ([Options].SessionEnded: its usage record is written then,
// not at a session's end it never has).
type agent20260728 struct {
	key   string // [Caller].Agent-derived; the agent's session id for Options.Session
	owner string
	own   *Own
	px    *proxy.Proxy

	tools     map[string]tool.Def
	resources map[string]tool.Resource
	prompts   map[string]tool.Prompt

	release func() // gives px back; nil when not acquired

	// ctx ends with the agent (idle, evicted, its owner revoked, the
	// server's end), with the reason as its cause: every request it
	// serves, listen and parked call of its ends with it.
	ctx  context.Context
	stop context.CancelCauseFunc

	listed atomic.Bool // tools/list answered once

	// guarded by agents20260728.mu
	busy  int
	used  time.Time
	ended bool
}

// agent20260728Prefix starts every modern agent key: it can never be a 2025
// session's id (rand.Text, base32).
const agent20260728Prefix = "m/"

func newAgent20260728(key, owner string, own *Own, px *proxy.Proxy, release func()) *agent20260728 {
	a := &agent20260728{key: key, owner: owner, own: own, px: px, release: release,
		tools: map[string]tool.Def{}, resources: map[string]tool.Resource{}, prompts: map[string]tool.Prompt{}}
	a.ctx, a.stop = context.WithCancelCause(context.Background())
	for _, d := range own.Tools {
		a.tools[d.Name] = d
	}
	for _, r := range own.Resources {
		a.resources[r.URI] = r
	}
	for _, p := range own.Prompts {
		a.prompts[p.Name] = p
	}
	return a
}

// firstListing reports whether this is the agent's first tools/list.
func (a *agent20260728) firstListing() bool { return !a.listed.Swap(true) }

func (a *agent20260728) ownTool(name string) bool { _, ok := a.tools[name]; return ok }

// ownTools are the agent's own tool definitions sorted by name, as
// go-sdk lists a 2025 session's.
func (a *agent20260728) ownTools() []tool.Def {
	out := append([]tool.Def(nil), a.own.Tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// agents20260728 are the live modern agents of a server, bounded like
// sessions: all together, and per owner. A caller past a bound takes the
// place of its owner's least recently used idle agent (which ends), or
// is refused when every one is busy.
type agents20260728 struct {
	srv *Server

	mu       sync.Mutex
	byKey    map[string]*agent20260728
	perOwner map[string]int
	max      int           // all owners (negative: no bound)
	maxOwner int           // one owner (negative: no bound)
	idle     time.Duration // an agent idle this long ends (0: never)
	sweeping bool

	renewOnce sync.Once // the renewal of shared claims (replica_claims20260728.go)
}

func newAgents20260728(s *Server) *agents20260728 {
	return &agents20260728{srv: s, byKey: map[string]*agent20260728{}, perOwner: map[string]int{},
		max: DefaultMaxSessions, maxOwner: DefaultMaxSessionsPerOwner, idle: DefaultAgentIdle}
}

// DefaultAgentIdle is how long a 2026-07-28 caller's agent lives on
// without a request when [StreamableHTTPOptions].AgentIdle and
// SessionTimeout are 0: as long as an idle session would.
const DefaultAgentIdle = 30 * time.Minute

// acquire returns the agent of key, made with make at its first request,
// marked busy until done is called.
func (m *agents20260728) acquire(key, owner string, make func() (*agent20260728, error)) (_ *agent20260728, done func(), err error) {
	m.mu.Lock()
	a := m.byKey[key]
	if a == nil {
		var evict *agent20260728
		if evict, err = m.room(owner); err != nil {
			m.mu.Unlock()
			return nil, nil, err
		}
		if evict != nil {
			m.forgetLocked(evict)
		}
		m.mu.Unlock()
		if evict != nil {
			m.end(evict, ErrSessionEnded)
		}
		if err = m.claim(owner, key); err != nil {
			return nil, nil, err
		}
		if a, err = make(); err != nil {
			m.unclaim(owner, key)
			return nil, nil, err
		}
		m.mu.Lock()
		if prev := m.byKey[key]; prev != nil {
			// Made at once by two requests: the first stays.
			m.mu.Unlock()
			a.stop(nil)
			if a.release != nil {
				a.release()
			}
			m.mu.Lock()
			a = prev
		} else {
			m.byKey[key] = a
			m.perOwner[owner]++
			m.startSweep()
		}
	}
	a.busy++
	a.used = time.Now()
	m.mu.Unlock()
	return a, func() {
		m.mu.Lock()
		a.busy--
		a.used = time.Now()
		m.mu.Unlock()
	}, nil
}

// room makes room for one more agent of owner: nothing to do, an idle
// agent to end, or the bound that refuses it. The caller holds m.mu.
func (m *agents20260728) room(owner string) (*agent20260728, error) {
	full := func(n, max int) bool { return max >= 0 && n >= max }
	ownerFull := full(m.perOwner[owner], m.maxOwner)
	if !ownerFull && !full(len(m.byKey), m.max) {
		return nil, nil
	}
	var lru *agent20260728
	for _, a := range m.byKey {
		if a.busy > 0 || ownerFull && a.owner != owner {
			continue
		}
		if lru == nil || a.used.Before(lru.used) {
			lru = a
		}
	}
	if lru != nil {
		return lru, nil
	}
	if ownerFull {
		return nil, fmt.Errorf("%w: this owner has %d agents with calls in flight, its limit; try again later", ErrTooManySessions, m.maxOwner)
	}
	return nil, fmt.Errorf("%w: the server has %d agents with calls in flight, its limit; try again later", ErrTooManySessions, m.max)
}

// forgetLocked removes a from the live agents. The caller holds m.mu.
func (m *agents20260728) forgetLocked(a *agent20260728) {
	if m.byKey[a.key] != a || a.ended {
		return
	}
	a.ended = true
	delete(m.byKey, a.key)
	if m.perOwner[a.owner]--; m.perOwner[a.owner] <= 0 {
		delete(m.perOwner, a.owner)
	}
}

// end ends a forgotten agent for cause: what it still runs ends (its
// context), its proxy is given back and its agent finished (usage
// record).
func (m *agents20260728) end(a *agent20260728, cause error) {
	a.stop(cause)
	m.srv.parked.endAgent(a.key, cause)
	m.unclaim(a.owner, a.key)
	if a.release != nil {
		a.release()
	}
	if f := m.srv.opts.SessionEnded; f != nil {
		f(a.key)
	}
}

// endAll ends every agent (the server's end).
func (m *agents20260728) endAll() {
	m.endWhere(ErrSessionEnded, func(*agent20260728) bool { return true })
}

// endWhere ends every agent which gone accepts, for cause.
func (m *agents20260728) endWhere(cause error, gone func(*agent20260728) bool) {
	m.mu.Lock()
	var all []*agent20260728
	for _, a := range m.byKey {
		if gone(a) {
			all = append(all, a)
		}
	}
	for _, a := range all {
		m.forgetLocked(a)
	}
	m.mu.Unlock()
	for _, a := range all {
		m.end(a, cause)
	}
}

// startSweep starts the sweeper that ends idle agents, once. The caller
// holds m.mu.
func (m *agents20260728) startSweep() {
	if m.sweeping || m.idle <= 0 {
		return
	}
	m.sweeping = true
	every := min(max(m.idle/4, 10*time.Millisecond), time.Minute)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for range t.C {
			if !m.sweep() {
				return
			}
		}
	}()
}

// sweep ends the agents idle past m.idle and reports whether any agent
// is left to watch (the sweeper stops when none is; the next agent
// starts it again).
func (m *agents20260728) sweep() bool {
	m.mu.Lock()
	var idle []*agent20260728
	for _, a := range m.byKey {
		if a.busy == 0 && time.Since(a.used) >= m.idle {
			idle = append(idle, a)
		}
	}
	for _, a := range idle {
		m.forgetLocked(a)
	}
	left := len(m.byKey) > 0
	if !left {
		m.sweeping = false
	}
	m.mu.Unlock()
	for _, a := range idle {
		m.end(a, ErrSessionEnded)
	}
	return left
}

// Agents is the number of live 2026-07-28 agents (callers without a
// session that made a request lately).
func (s *Server) Agents() int {
	s.agents20260728.mu.Lock()
	defer s.agents20260728.mu.Unlock()
	return len(s.agents20260728.byKey)
}

// agent20260728For returns the agent of the HTTP request r's caller.
func (s *Server) agent20260728For(r *http.Request) (*agent20260728, func(), error) {
	c := frontdoor.CallerOf(r.Context())
	key := agent20260728Prefix + c.Agent
	if c.Agent == "" {
		key = agent20260728Prefix + c.Owner
	}
	return s.agents20260728.acquire(key, c.Owner, func() (*agent20260728, error) {
		own, err := s.opts.Session(SessionInfo{ID: key, Request: r})
		if err != nil {
			return nil, err
		}
		if own == nil {
			own = &Own{}
		}
		px, release := s.opts.Proxy, func() {}
		if own.Acquire != nil {
			px, release = own.Acquire()
		}
		return newAgent20260728(key, c.Owner, own, px, release), nil
	})
}
