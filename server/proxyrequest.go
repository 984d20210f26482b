package server

import (
	"context"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// proxyRequest is the one place a client request becomes the typed
// [proxy.Request] every stage after routing reads, in both eras: its
// session (a 2025 session, or a 2026-07-28 request's own), its _meta, who
// it is for ([Options].Identify), and, from a 2026-07-28 envelope, the log
// level it asked for. call says it is a tools/call (counted for usage).
// The ctx returned is the one an own tool runs under.
func (s *Server) proxyRequest(ctx context.Context, sess proxy.Session, meta map[string]any, env *wire.Envelope, call bool) (context.Context, *proxy.Request, error) {
	r := &proxy.Request{Session: sess, Meta: meta}
	if env != nil {
		r.LogLevel = env.LogLevel
	}
	if s.opts.Identify == nil {
		return ctx, r, nil
	}
	ctx, err := s.opts.Identify(ctx, r, call)
	return ctx, r, err
}

// request20260728 is [Server.proxyRequest] for a 2026-07-28 request that
// is no tools/call: its own session ([requestSession]), its envelope.
func (s *Server) request20260728(ctx context.Context, r *request20260728, meta map[string]any) (context.Context, *proxy.Request, error) {
	return s.proxyRequest(ctx, newRequestSession(r), meta, &r.env, false)
}
