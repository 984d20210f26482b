package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/server/wire"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
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

// newSealer is the sealer of key, or of a fresh random key when key is
// nil (one process: states need not outlive it).
func newSealer(key []byte) (*wire.Sealer, error) {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return wire.NewSealer(key)
}

// binding is what a state for r's call of name with args is bound to.
func binding(r *modernRequest, name string, args json.RawMessage) (wire.StateBinding, error) {
	d, err := wire.ArgsDigest(args)
	if err != nil {
		return wire.StateBinding{}, wire.InvalidParams("%s: %v", r.method, err)
	}
	return wire.StateBinding{Owner: r.ag.owner, Agent: wire.AgentDigest(r.ag.key), Method: r.method, Name: name, Digest: d}, nil
}

// continuing reads r's retry, if it is one: its state is opened and
// checked (-32602 otherwise) and the call goes on under a ctx carrying
// what the upstream is to get back ([proxy.WithContinuation]).
func (s *Server) continuing(ctx context.Context, r *modernRequest, name string, args json.RawMessage) (context.Context, error) {
	retry, werr := wire.ParseRetry(r.params)
	if werr != nil {
		return ctx, werr
	}
	if !retry.IsRetry() {
		return ctx, nil
	}
	c := proxy.Continuation{Responses: retry.Responses}
	if retry.State != "" {
		want, err := binding(r, name, args)
		if err != nil {
			return ctx, err
		}
		p, err := s.sealer.Open(retry.State, want, time.Now())
		if err != nil {
			return ctx, wire.StateError(err)
		}
		c.State = p.State
		// Only the answers to what was asked go on.
		asked := map[string]bool{}
		for _, k := range p.Keys {
			asked[k] = true
		}
		for k := range c.Responses {
			if !asked[k] {
				delete(c.Responses, k)
			}
		}
	}
	return proxy.WithContinuation(ctx, c), nil
}

// inputRequired is the answer to r when its upstream needs input: the
// upstream's input requests, and a state of the proxy's, sealed. ok is
// false when err is not an input-required result.
func (s *Server) inputRequired(r *modernRequest, name string, args json.RawMessage, err error) (raw []byte, ok bool, _ error) {
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
		return nil, true, &wire.Error{Code: wire.CodeInternalError, Message: "the upstream's requestState cannot be carried: " + serr.Error()}
	}
	raw, eerr := wire.EncodeInputRequired(wire.InputRequired{Requests: ir.Requests, State: tok})
	return raw, true, eerr
}
