package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// A 2025 upstream asks its client mid-call (elicitation, sampling,
// roots); a 2026-07-28 client can only be asked by an input-required
// answer. So the proxy parks such a call: it runs on, detached from the
// request, while its questions go to the client as input requests; the
// client's retry (its sealed state names the parked call) hands each
// answer to the question waiting for it, and the call goes on — to its
// result, or to more questions. A parked call nobody comes back for ends
// after parkTTL, and one whose agent ends (its owner revoked) ends with
// it; there are at most maxParkedPerAgent of one agent,
// maxParkedPerOwner of one owner and maxParked in all, each with at most
// maxAsksPerCall questions waiting. A call past a bound is refused with
// HTTP 429 and ended.

const (
	parkTTL           = 10 * time.Minute
	maxParkedPerAgent = 16
	maxParkedPerOwner = 128
	maxParked         = 1024
	maxAsksPerCall    = 16
	// askGather is how long a call's first question waits for the ones
	// that come with it, so that they are put to the client together.
	askGather = 50 * time.Millisecond
)

// errTooManyParked refuses a question past a bound of parked calls.
var errTooManyParked = errors.New("too many calls waiting for their clients' input")

// errTooManyAsks answers an upstream's question past maxAsksPerCall.
var errTooManyAsks = errors.New("too many questions waiting for the client's input in one call")

// errNotAnswered ends a parked call's question when its client did not
// come back with the answer.
var errNotAnswered = errors.New("the client did not answer")

// ask is one question of an upstream, waiting for the client's answer.
type ask struct {
	method string
	params json.RawMessage
	reply  chan askReply // buffered: one answer
}

type askReply struct {
	raw json.RawMessage
	err error
}

type callResult struct {
	raw []byte
	err error
}

// parked is a call whose upstream asked its 2026-07-28 client something.
type parked struct {
	id     string
	agent  string // the modern agent's key
	owner  string
	cancel context.CancelCauseFunc
	asks   chan *ask
	done   chan callResult // buffered: the call's one end

	mu      sync.Mutex
	pending map[string]*ask // issued key → question
	seq     map[string]int  // per kind, for keys
	timer   *time.Timer
}

// parkedCalls are a server's parked calls by id.
type parkedCalls struct {
	mu       sync.Mutex
	byID     map[string]*parked
	perAgent map[string]int
	perOwner map[string]int
}

// bridge runs a call that may ask its client (run, with the session the
// upstream's questions reach) so that a 2026-07-28 client is asked by
// input-required answers. A retry naming a parked call resumes it.
func (s *Server) bridge(ctx context.Context, r *request20260728, name string, args json.RawMessage, run func(ctx context.Context, sess *requestSession) ([]byte, error)) ([]byte, error) {
	retry, st, err := s.retryOf(r, name, args)
	if err != nil {
		return nil, err
	}
	if st != nil && st.Parked != "" {
		p := s.unpark(st.Parked)
		if p == nil {
			return nil, wire.InvalidParams("invalid requestState: the call it continues is over (answered already, or waited longer than %s)", parkTTL)
		}
		p.answer(retry.Responses)
		return s.await(ctx, r, name, args, p)
	}
	cont := continued(retry, st)
	p := &parked{id: rand.Text(), agent: r.ag.key, owner: r.ag.owner, asks: make(chan *ask, 8), done: make(chan callResult, 1),
		pending: map[string]*ask{}, seq: map[string]int{}}
	// The call outlives this request if it parks: its context keeps the
	// request's values (identity, budget), not its end; it ends with the
	// server and with its agent (its owner revoked).
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })
	stopAgent := context.AfterFunc(r.ag.ctx, func() { cancel(context.Cause(r.ag.ctx)) })
	p.cancel = cancel
	sess := newRequestSession(r)
	sess.call, sess.cont = p, cont
	go func() {
		defer stop()
		defer stopAgent()
		raw, err := run(cctx, sess)
		if cctx.Err() != nil {
			// Ended, not answered: its place among the parked is free.
			s.unpark(p.id)
		}
		p.done <- callResult{raw, err}
	}()
	return s.await(ctx, r, name, args, p)
}

// await waits for p's call to end, or to ask: then p is parked and its
// questions are r's answer. ctx ending (the client gone) ends the call.
func (s *Server) await(ctx context.Context, r *request20260728, name string, args json.RawMessage, p *parked) ([]byte, error) {
	if p.waiting() {
		// Questions still unanswered: asked again.
		return s.park(r, name, args, p)
	}
	select {
	case res := <-p.done:
		// The call's context ends with this request's, which
		// serve20260728 ends once the answer is written: what the call
		// left to the background (a big result's count for the
		// budget, divert.Charge) waits for that, as over 2025.
		context.AfterFunc(ctx, func() { p.cancel(nil) })
		return res.raw, res.err
	case a := <-p.asks:
		p.add(a)
		gather := time.NewTimer(askGather)
		defer gather.Stop()
		for more := true; more; {
			select {
			case a := <-p.asks:
				p.add(a)
			case <-gather.C:
				more = false
			}
		}
		return s.park(r, name, args, p)
	case <-ctx.Done():
		p.cancel(context.Cause(ctx))
		return nil, context.Cause(ctx)
	}
}

// park files p (bounded) and answers r with its questions and a sealed
// state naming it.
func (s *Server) park(r *request20260728, name string, args json.RawMessage, p *parked) ([]byte, error) {
	pc := &s.parked
	pc.mu.Lock()
	if pc.byID == nil {
		pc.byID, pc.perAgent, pc.perOwner = map[string]*parked{}, map[string]int{}, map[string]int{}
	}
	if _, again := pc.byID[p.id]; !again {
		var bound string
		switch {
		case pc.perAgent[p.agent] >= maxParkedPerAgent:
			bound = fmt.Sprintf("this agent has %d, its limit", maxParkedPerAgent)
		case pc.perOwner[p.owner] >= maxParkedPerOwner:
			bound = fmt.Sprintf("this owner has %d, its limit", maxParkedPerOwner)
		case len(pc.byID) >= maxParked:
			bound = fmt.Sprintf("the server has %d, its limit", maxParked)
		}
		if bound != "" {
			pc.mu.Unlock()
			p.cancel(errTooManyParked)
			return nil, &wire.Error{Code: wire.CodeInternalError, Status: http.StatusTooManyRequests,
				Message: fmt.Sprintf("%v: %s; answer or abandon some first", errTooManyParked, bound)}
		}
		pc.byID[p.id] = p
		pc.perAgent[p.agent]++
		pc.perOwner[p.owner]++
	}
	pc.mu.Unlock()
	p.mu.Lock()
	p.timer = time.AfterFunc(parkTTL, func() {
		if s.unpark(p.id) != nil {
			p.cancel(fmt.Errorf("%w within %s", errNotAnswered, parkTTL))
		}
	})
	reqs := make(map[string]json.RawMessage, len(p.pending))
	keys := make([]string, 0, len(p.pending))
	for k, a := range p.pending {
		reqs[k], _ = json.Marshal(struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params,omitempty"`
		}{a.method, a.params})
		keys = append(keys, k)
	}
	p.mu.Unlock()
	b, err := binding(r, name, args)
	if err != nil {
		return nil, err
	}
	tok, err := s.sealer.Seal(wire.StatePayload{Parked: p.id, StateBinding: b, Keys: keys, Expires: time.Now().Add(parkTTL).Unix()})
	if err != nil {
		return nil, err
	}
	return wire.EncodeInputRequired(wire.InputRequired{Requests: reqs, State: tok})
}

// unpark takes the parked call id out of the parked ones (once: a state
// continues a call one time).
func (s *Server) unpark(id string) *parked { return s.parked.unpark(id) }

func (pc *parkedCalls) unpark(id string) *parked {
	pc.mu.Lock()
	p := pc.byID[id]
	if p != nil {
		delete(pc.byID, id)
		if pc.perAgent[p.agent]--; pc.perAgent[p.agent] <= 0 {
			delete(pc.perAgent, p.agent)
		}
		if pc.perOwner[p.owner]--; pc.perOwner[p.owner] <= 0 {
			delete(pc.perOwner, p.owner)
		}
	}
	pc.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		if p.timer != nil {
			p.timer.Stop()
		}
		p.mu.Unlock()
	}
	return p
}

// endAgent ends the parked calls of the agent key, for cause (its owner
// revoked, or it was evicted).
func (pc *parkedCalls) endAgent(key string, cause error) {
	pc.mu.Lock()
	var ids []string
	for id, p := range pc.byID {
		if p.agent == key {
			ids = append(ids, id)
		}
	}
	pc.mu.Unlock()
	for _, id := range ids {
		if p := pc.unpark(id); p != nil {
			p.cancel(cause)
		}
	}
}

// add files a question under a fresh key of its kind, or answers it at
// once past maxAsksPerCall.
func (p *parked) add(a *ask) {
	kind := map[string]string{"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}[a.method]
	if kind == "" {
		kind = "ask"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.pending) >= maxAsksPerCall {
		a.reply <- askReply{err: fmt.Errorf("%w (at most %d)", errTooManyAsks, maxAsksPerCall)}
		return
	}
	p.seq[kind]++
	p.pending[kind+"-"+strconv.Itoa(p.seq[kind])] = a
}

// answer hands each response to the question of its key.
func (p *parked) answer(responses map[string]json.RawMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, raw := range responses {
		if a := p.pending[k]; a != nil {
			a.reply <- askReply{raw: raw}
			delete(p.pending, k)
		}
	}
}

// waiting reports whether questions are still unanswered.
func (p *parked) waiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending) > 0
}

// put is a question of the call's upstream (requestSession.Request): it
// waits for the client's answer through a retry.
func (p *parked) put(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	a := &ask{method: method, params: params, reply: make(chan askReply, 1)}
	select {
	case p.asks <- a:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	select {
	case r := <-a.reply:
		return r.raw, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}
