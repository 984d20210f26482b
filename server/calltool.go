package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// toolCall is one tools/call as either era hands it over: the proxy it
// goes to, who upstreams may ask and tell while it runs, and what of the
// caller's own the era knows.
type toolCall struct {
	px   *proxy.Proxy
	sess proxy.Session
	// env is a 2026-07-28 request's envelope; nil for 2025.
	env *wire.Envelope
	// cont is a 2026-07-28 retry's answers; nil for a first call.
	cont *proxy.Continuation
	// own reports whether name is one of the caller's own tools.
	own func(name string) bool
	// found, when not nil, is told the tools a search showed (a 2025
	// session lists them from then on; a 2026-07-28 listing never grows).
	found func(names []string)
}

// callTool runs the upstream part of a tools/call, the same for both
// eras: the typed request (proxyrequest.go: who it is for, counted),
// search mode's tools, the wait for upstreams still starting, and the
// forwarded call. It returns the raw result, or an error for the client
// (a JSON-RPC error), or neither for one of the caller's own tools, which
// the era runs under the returned ctx (the identify stage's).
func (s *Server) callTool(ctx context.Context, tc toolCall, name string, args json.RawMessage, meta map[string]any) (context.Context, json.RawMessage, error) {
	px := tc.px
	ctx, req, err := s.proxyRequest(ctx, tc.sess, meta, tc.env, callerOf)
	if err != nil {
		return ctx, proxy.ToolError(err.Error()), nil
	}
	req.Continuation = tc.cont
	searching := px.Searching() && (name == proxy.SearchToolName || name == proxy.CallToolName)
	if searching {
		px.AwaitStarted(ctx, 0)
	}
	if searching && name == proxy.CallToolName {
		// The tool it names runs exactly as if it were listed and
		// called: accounting, divert, progress, cancellation.
		n, a, errRes := px.CallToolTarget(ctx, req, args)
		if errRes != nil {
			return ctx, errRes, nil
		}
		name, args = n, a
		// The model called it, whatever the host renders.
		req.ByModel = true
	}
	if searching && name == proxy.SearchToolName {
		raw, found := px.SearchTools(ctx, req, args)
		if tc.found != nil {
			tc.found(found)
		}
		return ctx, raw, nil
	}
	own := tc.own(name)
	if !px.HasTool(name) && !own {
		// A client that calls before listing (2026-07-28 has no
		// initialize to wait in) may be ahead of upstreams still
		// starting: every one is waited for, bounded.
		px.AwaitAll(ctx)
		if starting := px.StartingServers(); !px.HasTool(name) && len(starting) > 0 {
			return ctx, proxy.ToolError(fmt.Sprintf("unknown tool %s: not listed yet; still starting: %s (past the start wait). Try again in a moment.", quoteName(name), strings.Join(starting, ", "))), nil
		}
	}
	if px.HasTool(name) {
		raw, err := px.CallTool(ctx, req, name, args)
		if errors.As(err, new(*upstream.InputRequired)) {
			return ctx, nil, err // the era answers it (rev20260728_inputrequired.go)
		}
		if err != nil {
			return ctx, nil, clientError(err)
		}
		return ctx, raw, nil
	}
	if own {
		return ctx, nil, nil
	}
	if msg := px.AwaitingLogin(); msg != "" {
		// Unknown, perhaps because its server waits for a login: the
		// client can show the login, or the model tell the user what
		// to do.
		if lr := px.PendingLogins(); len(lr) > 0 && tc.sess.Capabilities().ElicitationURL {
			return ctx, nil, urlElicitation(lr)
		}
		return ctx, proxy.ToolError(fmt.Sprintf("unknown tool %s; not listed yet: %s", quoteName(name), msg)), nil
	}
	if down := px.DownServers(); len(down) > 0 {
		// Perhaps a tool of a server that is down: the model can say
		// which and why, which "unknown tool" alone would not.
		return ctx, proxy.ToolError(fmt.Sprintf("unknown tool %s; not listed, perhaps because a server is down: %s", quoteName(name), strings.Join(down, "; "))), nil
	}
	// go-sdk would answer the same, quoting the whole name, which may be
	// megabytes.
	return ctx, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + quoteName(name)}
}
