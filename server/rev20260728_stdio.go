package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// stdio20260728 serves the 2026-07-28 lines of one stdio connection; the
// others go to its 2025 session (go-sdk). One connection speaks one
// revision: the first initialize makes it a 2025 session, the first
// 2026-07-28 request other than server/discover makes it a 2026-07-28
// one, and a message of the other revision is refused from then on
// (server/discover never decides: a client may probe, then initialize).
// The process is one agent: the connection's session's own tools and
// proxy serve both revisions alike, under the session's id.
type stdio20260728 struct {
	s   *Server
	se  *session
	out *rawStdio // answers are written under its lock
	ctx context.Context

	slots chan struct{} // bounds the requests in flight

	mu       sync.Mutex
	era      wire.Era
	locked   bool
	version  string // the 2025 revision initialize asked for, once locked so
	inflight map[string]context.CancelCauseFunc
	ag       *agent20260728
	wg       sync.WaitGroup
}

// maxStdioInFlight bounds a stdio client's 2026-07-28 requests in flight;
// past it the next line is read when one is answered.
const maxStdioInFlight = 64

func newStdio20260728(ctx context.Context, s *Server, se *session, out *rawStdio) *stdio20260728 {
	return &stdio20260728{s: s, se: se, out: out, ctx: ctx, slots: make(chan struct{}, maxStdioInFlight),
		inflight: map[string]context.CancelCauseFunc{}}
}

// take is the stdio filter's hook ([stdioFilter]): it serves line when it
// is a 2026-07-28 message (or answers why it is refused) and reports
// whether it did; the lines it leaves go to the 2025 session.
func (m *stdio20260728) take(line []byte) (answer []byte, taken bool) {
	if len(line) > 0 && line[0] == '[' && inBatch20260728(line) {
		return append(errorResponse(nil, batchRefused), '\n'), true
	}
	if len(line) == 0 || line[0] != '{' {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil, false
	}
	id := messageID(line)
	refuse := func(e *wire.Error) []byte { return append(errorResponse(id, e), '\n') }
	if req.Method == "initialize" {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.locked && m.era == wire.Era20260728 {
			return refuse(&wire.Error{Code: wire.CodeInvalidRequest, Message: "this stdio connection speaks MCP 2026-07-28 (it made requests without initialize): initialize is refused; start a new connection to speak a 2025 revision"}), true
		}
		m.locked, m.era = true, wire.Era2025
		m.version = initializeVersion(line)
		return nil, false
	}
	if !req.IsCall() {
		if req.Method == "notifications/cancelled" && m.cancel(req.Params) {
			return nil, true
		}
		return nil, false
	}
	era, _ := wire.Classify(nil, req.Params)
	if era != wire.Era20260728 {
		return nil, false
	}
	if _, known := wire.Method(req.Method); !known {
		return refuse(wire.MethodNotFound(req.Method)), true
	}
	env, werr := check20260728(req.Method, req.Params)
	if werr != nil {
		return refuse(werr), true
	}
	key := string(id)
	m.mu.Lock()
	if m.locked && m.era == wire.Era2025 {
		m.mu.Unlock()
		return refuse(&wire.Error{Code: wire.CodeInvalidRequest, Message: fmt.Sprintf("this stdio connection is a session of MCP %s (it initialized): a 2026-07-28 request is refused; send it without the envelope, or start a new connection", m.version)}), true
	}
	if req.Method != "server/discover" {
		m.locked, m.era = true, wire.Era20260728
	}
	if _, dup := m.inflight[key]; dup {
		m.mu.Unlock()
		return refuse(&wire.Error{Code: wire.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %s", key)}), true
	}
	ctx, cancel := context.WithCancelCause(m.ctx)
	m.inflight[key] = cancel
	ag := m.agent()
	m.wg.Add(1)
	m.mu.Unlock()
	if sctx := m.s.opts.StartUpstreams; sctx != nil {
		// No initialize says what the client takes: upstreams start
		// with its first request, offered all.
		ag.px.Start(sctx, nil)
	}
	m.slots <- struct{}{}
	go func() {
		defer func() {
			<-m.slots
			m.mu.Lock()
			delete(m.inflight, key)
			m.mu.Unlock()
			cancel(nil)
			m.wg.Done()
		}()
		out := &stdioAnswer{t: m.out, id: id}
		m.s.serve20260728(ctx, &request20260728{id: id, method: req.Method, params: req.Params, env: env, out: out, ag: ag})
	}()
	return nil, true
}

// agent is the process's agent as 2026-07-28 requests see it. The
// caller holds m.mu.
func (m *stdio20260728) agent() *agent20260728 {
	if m.ag == nil {
		px, release := m.s.opts.Proxy, func() {}
		if m.se.own.Acquire != nil {
			px, release = m.se.own.Acquire()
		}
		m.ag = newAgent20260728(m.se.id, "", m.se.own, px, release)
	}
	return m.ag
}

// cancel ends the 2026-07-28 request a notifications/cancelled names and
// reports whether it named one.
func (m *stdio20260728) cancel(params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if wire.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return false
	}
	m.mu.Lock()
	cancel := m.inflight[string(bytes.TrimSpace(p.RequestID))]
	m.mu.Unlock()
	if cancel == nil {
		return false
	}
	cancel(context.Canceled)
	return true
}

// waitIdle returns once the 2026-07-28 requests read so far are
// answered, or ctx ends.
func (m *stdio20260728) waitIdle(ctx context.Context) {
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// endListens answers this connection's subscriptions/listen requests:
// at the end of the client's input nothing more will be listened for.
func (m *stdio20260728) endListens() {
	m.mu.Lock()
	ag := m.ag
	m.mu.Unlock()
	if ag != nil {
		m.s.endListensOf(ag)
	}
}

// end waits (bounded by the calls' own ends, which the connection's end
// brings) for the requests in flight, then ends the agent if 2026-07-28
// requests used it: its usage record is written.
func (m *stdio20260728) end() {
	m.wg.Wait()
	m.mu.Lock()
	ag := m.ag
	used := m.locked && m.era == wire.Era20260728
	m.mu.Unlock()
	if ag == nil {
		return
	}
	ag.stop(ErrClientGone)
	ag.release()
	if used && m.s.opts.SessionEnded != nil {
		m.s.opts.SessionEnded(ag.key)
	}
}

// stdioAnswer is a 2026-07-28 request's answer over stdio: each message
// one line, written whole under the connection's lock.
type stdioAnswer struct {
	t  *rawStdio
	id json.RawMessage

	mu   sync.Mutex
	done bool
}

func (a *stdioAnswer) write(parts ...[]byte) error {
	a.t.mu.Lock()
	defer a.t.mu.Unlock()
	for _, p := range parts {
		if _, err := a.t.out.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (a *stdioAnswer) notify(method string, params json.RawMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return errAnswered
	}
	msg, err := notification(method, params)
	if err != nil {
		return err
	}
	return a.write(msg, []byte("\n"))
}

func (a *stdioAnswer) result(raw []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return errAnswered
	}
	a.done = true
	raw, err := oneLine(raw)
	if err != nil {
		return err
	}
	head := append(append([]byte(responseHead), a.id...), `,"result":`...)
	return a.write(head, raw, []byte("}\n"))
}

func (a *stdioAnswer) fail(e *wire.Error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return errAnswered
	}
	a.done = true
	return a.write(errorResponse(a.id, e), []byte("\n"))
}
