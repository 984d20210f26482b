package server

import (
	"context"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// answeredTo says whom a forwarded request's answer reaches, which is
// what the identify stage must resolve for it.
type answeredTo int

const (
	// hostOf: a completion, a skills listing: the host's, charged to no
	// one, so no agent is resolved (none is created for it).
	hostOf answeredTo = iota
	// agentOf: a resource read, a prompt, a task's answer: charged to the
	// calling agent's budget and diverted by it.
	agentOf
	// callerOf: a tools/call, which is also counted for the agent's
	// usage.
	callerOf
)

// proxyRequest is the one place a client request becomes the typed
// [proxy.Request] every stage after routing reads, in both eras: its
// session (a 2025 session, or a 2026-07-28 request's own), its _meta, who
// it is for ([Options].Identify, unless to is hostOf), and, from a
// 2026-07-28 envelope, the log level it asked for. The ctx returned is
// the one an own tool runs under.
func (s *Server) proxyRequest(ctx context.Context, sess proxy.Session, meta map[string]any, env *wire.Envelope, to answeredTo) (context.Context, *proxy.Request, error) {
	r := &proxy.Request{Session: sess, Meta: meta}
	if env != nil {
		r.LogLevel = env.LogLevel
	}
	if s.opts.Identify == nil || to == hostOf {
		return ctx, r, nil
	}
	ctx, err := s.opts.Identify(ctx, r, to == callerOf)
	return ctx, r, err
}

// request20260728 is [Server.proxyRequest] for a 2026-07-28 request that
// is no tools/call: its own session ([requestSession]), its envelope.
func (s *Server) request20260728(ctx context.Context, r *request20260728, meta map[string]any, to answeredTo) (context.Context, *proxy.Request, error) {
	return s.proxyRequest(ctx, newRequestSession(r), meta, &r.env, to)
}
