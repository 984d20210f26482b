package intercept

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// defaultStartWait bounds how long initialize waits for upstreams that
// are still connecting (see [Options.StartWait]).
const defaultStartWait = 15 * time.Second

// ownCaps is what the proxy's server offers by itself, apart from
// upstreams: noted at [Router.Attach], before any upstream is registered.
type ownCaps struct {
	resources, prompts bool
}

// AwaitStarted waits until no upstream is in its first connection
// attempt, or max has passed, or ctx ends. An upstream that is restarting
// is not waited for: it was ready once, and list_changed announces its
// return.
func (r *Router) AwaitStarted(ctx context.Context, max time.Duration) {
	deadline := time.Now().Add(max)
	for {
		starting := false
		for _, u := range r.ups {
			if st, _ := u.State(); st == StateConnecting {
				starting = true
				break
			}
		}
		if !starting || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// advertise sets the capabilities an initialize answer declares: the
// proxy's own plus the union of its upstreams'. mcp-go keeps serving
// every method (an upstream may add them later); this only decides what
// a client is told. An upstream that never connected is unknown, and
// counts as offering everything: a client never uses what it was not
// told about, and an upstream that is down now may be up in a moment.
func (r *Router) advertise(c *mcp.ServerCapabilities) {
	var logging, completions, prompts, resources, subscribe bool
	prompts = r.own.prompts
	resources, subscribe = r.own.resources, r.own.resources
	for _, u := range r.ups {
		caps := u.Capabilities()
		if u.InitializeResult() == nil {
			logging, completions, prompts, resources, subscribe = true, true, true, true, true
			continue
		}
		logging = logging || caps.Logging != nil
		completions = completions || caps.Completions != nil
		prompts = prompts || caps.Prompts != nil
		if caps.Resources != nil {
			resources = true
			subscribe = subscribe || caps.Resources.Subscribe
		}
	}
	if !logging {
		c.Logging = nil
	}
	if !completions {
		c.Completions = nil
	}
	if !prompts {
		c.Prompts = nil
	}
	switch {
	case !resources:
		c.Resources = nil
	case c.Resources != nil:
		c.Resources.Subscribe = subscribe
	}
}

// noteOwn records what s offers before upstreams are attached.
func (r *Router) noteOwn(s *server.MCPServer) {
	r.own = ownCaps{resources: len(s.ListResources()) > 0, prompts: len(s.ListPrompts()) > 0}
}

// mirrorOffer is what a client declared of what the proxy forwards
// (sampling, elicitation, roots), as it declared it.
func mirrorOffer(c mcp.ClientCapabilities) map[string]any {
	var all map[string]any
	b, _ := json.Marshal(c)
	_ = json.Unmarshal(b, &all)
	offer := map[string]any{}
	for _, k := range []string{"roots", "sampling", "elicitation"} {
		if v, ok := all[k]; ok {
			offer[k] = v
		}
	}
	return offer
}

// addStartHook starts the upstreams on the first client request under
// [Options.StartOnFirstClient], offering them what an initializing client
// declared.
func (r *Router) addStartHook(h *server.Hooks) {
	if !r.opts.StartOnFirstClient {
		return
	}
	start := func(offer map[string]any) {
		r.mu.RLock()
		ctx := r.startCtx
		r.mu.RUnlock()
		if ctx != nil {
			r.startAll(ctx, offer)
		}
	}
	h.AddBeforeInitialize(func(ctx context.Context, id any, req *mcp.InitializeRequest) {
		start(mirrorOffer(req.Params.Capabilities))
	})
	h.AddBeforeAny(func(ctx context.Context, id any, method mcp.MCPMethod, message any) {
		if method != mcp.MethodInitialize {
			start(upstream.DefaultOffer()) // a client without initialize (2026-07-28)
		}
	})
}

// addInitializeHook makes initialize wait for starting upstreams, bounded,
// and declare the union of capabilities.
func (r *Router) addInitializeHook(h *server.Hooks) {
	h.AddAfterInitialize(func(ctx context.Context, id any, req *mcp.InitializeRequest, res *mcp.InitializeResult) {
		// mcp-go's legacy SSE sessions do not keep what the client
		// declared; requests forwarded to it are checked against it.
		if cs := server.ClientSessionFromContext(ctx); cs != nil && req != nil {
			if _, ok := cs.(server.SessionWithClientInfo); !ok {
				r.sse.setCaps(cs.SessionID(), req.Params.Capabilities)
			}
		}
		if res == nil {
			return
		}
		wait := r.opts.StartWait
		if wait == 0 {
			wait = defaultStartWait
		}
		r.AwaitStarted(ctx, wait)
		r.advertise(&res.Capabilities)
	})
}
