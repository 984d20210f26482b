package server

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// A 2026-07-28 upstream that needs input answers input-required; a
// 2026-07-28 client answers it and retries. Between the two the proxy
// hands out a requestState of its own, sealed ([wire.Sealer]): it holds
// the upstream's state and the keys it asked, bound to the caller (owner,
// agent), the method, the name and the arguments, and expires. A retry
// whose state is tampered with, foreign, stale or for another call is
// refused before anything is forwarded; a valid one goes on to the same
// upstream with its own state and the answers to the keys it asked.

// stateTTL is how long a sealed requestState may be presented.
const stateTTL = 10 * time.Minute

// newSealer is the sealer of keys (the first seals), or of a fresh
// random key when there are none (one process: states need not outlive
// it).
func newSealer(keys ...[]byte) (*wire.Sealer, error) {
	if len(keys) == 0 {
		key := make([]byte, 32)
		_, _ = rand.Read(key)
		keys = [][]byte{key}
	}
	return wire.NewSealer(keys...)
}

// binding is what a state for r's call of name with args is bound to.
func binding(r *request20260728, name string, args json.RawMessage) (wire.StateBinding, error) {
	d, err := wire.ArgsDigest(args)
	if err != nil {
		return wire.StateBinding{}, wire.InvalidParams("%s: %v", r.method, err)
	}
	return wire.StateBinding{Owner: r.ag.owner, Agent: wire.AgentDigest(r.ag.key), Method: r.method, Name: name, Digest: d}, nil
}

// retryOf reads r's retry, if it is one: its answers, and its state
// opened and checked (-32602 otherwise); st is nil without a state.
func (s *Server) retryOf(r *request20260728, name string, args json.RawMessage) (retry wire.Retry, st *wire.StatePayload, err error) {
	retry, werr := wire.ParseRetry(r.params)
	if werr != nil {
		return retry, nil, werr
	}
	if retry.State == "" {
		return retry, nil, nil
	}
	want, err := binding(r, name, args)
	if err != nil {
		return retry, nil, err
	}
	p, err := s.sealer.Open(retry.State, want, time.Now())
	if err != nil {
		return retry, nil, wire.StateError(err)
	}
	return retry, &p, nil
}

// continuing reads r's retry, if it is one ([Server.retryOf]): what the
// upstream is to get back, nil for a first call.
func (s *Server) continuing(r *request20260728, name string, args json.RawMessage) (*proxy.Continuation, error) {
	retry, st, err := s.retryOf(r, name, args)
	if err != nil {
		return nil, err
	}
	return continued(retry, st), nil
}

// continued is a retry's continuation for the upstream (its
// [proxy.Request].Continuation): the upstream's own state, and only the
// answers to what was asked; nil when r is no retry.
func continued(retry wire.Retry, st *wire.StatePayload) *proxy.Continuation {
	if !retry.IsRetry() {
		return nil
	}
	c := proxy.Continuation{Responses: retry.Responses}
	if st != nil {
		c.State = st.State
		asked := map[string]bool{}
		for _, k := range st.Keys {
			asked[k] = true
		}
		for k := range c.Responses {
			if !asked[k] {
				delete(c.Responses, k)
			}
		}
	}
	return &c
}

// inputRequired is the answer to r when its upstream needs input: the
// upstream's input requests, and a state of the proxy's, sealed. ok is
// false when err is not an input-required result.
func (s *Server) inputRequired(r *request20260728, name string, args json.RawMessage, err error) (raw []byte, ok bool, _ error) {
	ir, ok := errors.AsType[*upstream.InputRequired](err)
	if !ok {
		return nil, false, nil
	}
	b, berr := binding(r, name, args)
	if berr != nil {
		return nil, true, berr
	}
	p := wire.StatePayload{State: ir.State, StateBinding: b, Expires: time.Now().Add(stateTTL).Unix()}
	for k := range ir.Requests {
		p.Keys = append(p.Keys, k)
	}
	tok, serr := s.sealer.Seal(p)
	if serr != nil {
		return nil, true, &wire.Error{Code: wire.CodeInternalError, Status: http.StatusBadGateway, Message: "the upstream's requestState cannot be carried: " + serr.Error()}
	}
	raw, eerr := wire.EncodeInputRequired(wire.InputRequired{Requests: ir.Requests, State: tok})
	return raw, true, eerr
}
