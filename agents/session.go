package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/scratchpad-mcp/scratchpad-mcp/appview"
	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// UsageMetaKey is where a client reports the model's real usage in a
// tools/call request's _meta: {"input_tokens": n, "output_tokens": m}.
const UsageMetaKey = "scratchpad/usage"

// Session is what one client session gets of the server's own: its
// identity, parsed, validated and normalised once when the session begins,
// and from it the tools, resources, prompts, instructions and limits its
// agent is offered. Made by [Registry.Session]; its agent is created on
// the session's first call ([Registry.Resolve]).
type Session struct {
	ID       string
	Identity Identity

	Tools     []tool.Def
	Resources []tool.Resource
	Prompts   []tool.Prompt
	// Instructions and InitializeMeta are the agent's own: a worker with
	// overrides is told its numbers, not [agent]'s.
	Instructions   string
	InitializeMeta map[string]any

	reg    *Registry
	listed atomic.Int64 // tokens of the longest tools/list answer the client got ([Session.Listed])
}

// Session returns the session sid: over stdio (req nil) the registry's
// default identity, over HTTP the identity of the request that creates it
// ([FromRequest], as the HTTP front door parsed it into the request's context
// with [WithRequestIdentity], or parsed here when nothing did).
func (r *Registry) Session(sid string, req *http.Request) (*Session, error) {
	id := r.opts.Default
	if req != nil {
		var ok bool
		if id, ok = requestIdentity(req.Context()); !ok {
			var err error
			if id, err = FromRequest(req, ""); err != nil {
				return nil, err
			}
		}
	}
	return r.SessionFor(sid, id)
}

// SessionFor returns the session sid of the agent id (normalised here).
func (r *Registry) SessionFor(sid string, id Identity) (*Session, error) {
	id, err := id.Normalize()
	if err != nil {
		return nil, err
	}
	settings := r.settings(id)
	return &Session{
		ID: sid, Identity: id, reg: r,
		Tools:          r.OwnTools(id),
		Resources:      append(append([]tool.Resource{}, r.padRes...), appview.Resource()),
		Prompts:        r.padPrompt,
		Instructions:   Instructions(settings),
		InitializeMeta: LimitsMeta(settings),
	}, nil
}

type sessionKey struct{}

// figuresKey carries the per-request figures of a session's request.
type figuresKey struct{}

// Context returns ctx for one request of the session, whose HTTP header h
// (nil over stdio) may carry the model's real context use
// ([HeaderContextTokens]); who the agent is was fixed when the session
// began and is not read again.
func (s *Session) Context(ctx context.Context, h http.Header) context.Context {
	ctx = context.WithValue(ctx, sessionKey{}, s)
	if h != nil {
		if n, err := ContextTokens(h.Get(HeaderContextTokens)); err == nil && n > 0 {
			ctx = context.WithValue(ctx, figuresKey{}, n)
		}
	}
	return ctx
}

// sessionFrom returns the session of a request's context.
func sessionFrom(ctx context.Context) (*Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(*Session)
	return s, ok
}

// contextTokensFrom returns the request's reported context use, 0 if none.
func contextTokensFrom(ctx context.Context) int {
	n, _ := ctx.Value(figuresKey{}).(int)
	return n
}

// Watch subscribes notify to changes of the session's pad resource uri;
// it returns the function that ends the subscription. Nil without a pad.
func (s *Session) Watch() func(ctx context.Context, uri string, notify func()) (stop func()) {
	r := s.reg
	if r.watcher == nil {
		return nil
	}
	return func(ctx context.Context, uri string, notify func()) func() {
		ag, err := r.Resolve(ctx)
		if err != nil {
			return func() {}
		}
		p, err := ag.Pad()
		if err != nil {
			return func() {}
		}
		sub := s.ID + " " + uri
		r.watcher.Subscribe(sub, p, notify)
		return func() { r.watcher.Unsubscribe(sub) }
	}
}

// OwnTools is what an agent of identity id is offered of the server's own
// tools: exploration, the pad, the memory tool (under its
// [agent.scratchpad] memory_tool, none for ""), and the artifact tools
// (writing only for coordinators).
func (r *Registry) OwnTools(id Identity) []tool.Def {
	out := append([]tool.Def{}, r.explore...)
	out = append(out, r.pad...)
	out = append(out, r.memoryTool(id)...)
	out = append(out, r.view...)
	for _, d := range r.artifacts {
		if d.Name == artifacts.ToolWrite && id.Role != RoleCoordinator {
			continue
		}
		out = append(out, d)
	}
	return out
}

// Reserved names the server's own tools, resources and prompts, which no
// upstream's may shadow.
func (r *Registry) Reserved() (tools, resources, prompts []string) {
	for _, d := range r.OwnTools(Identity{Role: RoleCoordinator}) {
		tools = append(tools, d.Name)
	}
	for _, d := range r.memory { // every worker's name too
		if !slices.Contains(tools, d.Name) {
			tools = append(tools, d.Name)
		}
	}
	for _, x := range r.padRes {
		resources = append(resources, x.URI)
	}
	resources = append(resources, appview.URI)
	for _, p := range r.padPrompt {
		prompts = append(prompts, p.Name)
	}
	return tools, resources, prompts
}

// carried counts what an agent already holds from this server before its
// first call: the tools/list answer it got ([Session.Listed]: the
// server's own tools and every upstream's, as sent) and the
// instructions. Before any listing, its own tool definitions stand in
// for it.
func (r *Registry) carried(s *Session, count func(string) int) int {
	if n := s.listed.Load(); n > 0 {
		return int(n) + count(s.Instructions)
	}
	// Tools offered only to clients with an extension (the view's) are
	// left out: most clients never see them, and the listing, once
	// made, replaces this estimate.
	var defs []tool.Def
	for _, d := range s.Tools {
		if d.Extension == "" {
			defs = append(defs, d)
		}
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	b, _ := json.Marshal(defs)
	return count(string(b)) + count(s.Instructions)
}

// Listed takes a tools/list answer as the client received it (raw, the
// whole result): what the agent carries becomes its count plus the
// instructions, counted by the agent's tokenizer, when that is more than
// before ([budget.Agent.Carry]). A client lists again after
// tools/list_changed, so an upstream's new tools are carried then.
// Before the agent's first call the count waits in the session, and the
// agent starts with it; with replicas the agent starts at the listing.
func (s *Session) Listed(raw []byte) {
	r := s.reg
	settings := r.settings(s.Identity)
	counter := tokens.ForModel(settings.Provider, settings.Model)
	n := int64(counter.Count(raw))
	for {
		cur := s.listed.Load()
		if n <= cur || s.listed.CompareAndSwap(cur, n) {
			break
		}
	}
	r.mu.Lock()
	a := r.agents[s.ID]
	r.mu.Unlock()
	if a == nil && r.opts.State.Replicated() {
		// The next request may reach another replica, whose copy of this
		// session never saw the listing: the agent starts now, so that
		// what it carries is on the shared counters.
		if created, err := r.Resolve(s.Context(context.Background(), nil)); err == nil {
			a = created
		}
	}
	if a != nil {
		if d := a.Budget.Carry(int(n) + counter.CountString(s.Instructions)); d > 0 {
			r.log.Debug("agent carries a longer tool listing", "agent", s.Identity.Agent, "session", s.ID, "added", d)
		}
	}
}

// Identify is the identify stage for one request of a session that
// reaches the proxy or an own tool: it resolves the agent once for the
// whole request (the returned ctx carries it, and names it for the pad's
// ledger: own tools are handlers of a context). For a tools/call (call)
// it also counts the call for usage, takes the model's real usage when the
// client reports it in _meta ([UsageMetaKey]), and names the agent on the
// request's audit record.
func (r *Registry) Identify(ctx context.Context, meta map[string]any, call bool) (context.Context, *Agent, error) {
	ag, err := r.Resolve(ctx)
	if err != nil {
		return ctx, nil, fmt.Errorf("scratchpad-mcp: %w", err)
	}
	if call {
		ag.Budget.CountCall()
		if in, out, ok := reportedUsage(meta); ok {
			ag.Budget.ObserveUsage(in, out)
		}
		if sp := telemetry.ServerSpan(ctx); sp != nil {
			// The audit record's who, and its budget read after the call.
			b := ag.Budget
			sp.Note(telemetry.Tally{Agent: ag.ID.Agent, Run: ag.ID.Run, Role: ag.ID.Role,
				Budget: func() (int, int, bool) { return b.Remaining(), b.Total(), b.Limited() }})
		}
	}
	return pad.WithAuthor(context.WithValue(ctx, resolvedKey{}, ag), ag.ID.Agent), ag, nil
}

// reportedUsage reads _meta["scratchpad/usage"] = {input_tokens, output_tokens}.
func reportedUsage(m map[string]any) (in, out int, ok bool) {
	u, isMap := m[UsageMetaKey].(map[string]any)
	if !isMap {
		return 0, 0, false
	}
	num := func(k string) int {
		switch v := u[k].(type) {
		case float64:
			return int(v)
		case json.Number:
			n, _ := v.Int64()
			return int(n)
		}
		return 0
	}
	in, out = num("input_tokens"), num("output_tokens")
	return in, out, in > 0 || out > 0
}
