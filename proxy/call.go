package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Sentinel errors. Match them with [errors.Is].
var (
	// ErrNotFound means no upstream exposes the named tool, prompt or
	// resource.
	ErrNotFound = errors.New("not found")
	// ErrUpstreamTimeout means an upstream did not answer a forwarded
	// request within its server's timeout.
	ErrUpstreamTimeout = errors.New("upstream timed out")
)

// HasTool reports whether name is an exposed upstream tool.
func (p *Proxy) HasTool(name string) bool { return p.cat.tool(name) != nil }

// ToolServer is the name of the upstream server exposing tool name, ""
// for none (an own tool, an unknown one).
func (p *Proxy) ToolServer(name string) string {
	if p == nil {
		return ""
	}
	if rt := p.cat.tool(name); rt != nil {
		return rt.up.Config().Name
	}
	return ""
}

// ToolDefinition is the definition of the exposed tool name as it is
// listed (its inputSchema's x-mcp-header bindings are checked against a
// 2026-07-28 request's headers), and whether it is listed.
func (p *Proxy) ToolDefinition(name string) (json.RawMessage, bool) {
	if rt := p.cat.tool(name); rt != nil {
		return rt.raw, true
	}
	return nil, false
}

// CallTool forwards one tools/call to the upstream exposing name and
// diverts its result when it is large. The result is raw JSON: the
// upstream's bytes unchanged, or a pointer. An upstream's JSON-RPC error
// is returned as an [*upstream.RPCError] (code, message and data, for the
// client); failures the model should read (upstream down, timeout, a
// result over max_result_bytes, save failed) are tool results with
// isError.
//
// Whatever result is sent, its cost to the model is charged to r's agent
// ([Request.charge]): the budget's "left" is the context really left.
func (p *Proxy) CallTool(ctx context.Context, r *Request, name string, args json.RawMessage) (json.RawMessage, error) {
	res, err := p.callTool(ctx, r, name, args)
	if err != nil || res == nil || r == nil || r.charged {
		return res, err
	}
	agent := r.Agent
	if rt := p.cat.tool(name); rt != nil && agent != nil && p.opts.Telemetry != nil {
		// Not diverted: what is charged passed through.
		var decided func(divert.Outcome)
		agent, decided = p.observed(ctx, agent, rt.up.Config().Name, rt.orig)
		decided(divert.Outcome{})
	}
	r.chargeTo(ctx, agent, res)
	return res, nil
}

// callTool is CallTool but for the charge of an answer divert did not
// charge.
func (p *Proxy) callTool(ctx context.Context, r *Request, name string, args json.RawMessage) (res json.RawMessage, err error) {
	s := r.session()
	rt := p.cat.tool(name)
	if rt == nil {
		if msg := p.AwaitingLogin(); msg != "" {
			return nil, fmt.Errorf("%w: tool %q (not listed yet: %s)", ErrNotFound, name, msg)
		}
		return nil, fmt.Errorf("%w: tool %q", ErrNotFound, name)
	}
	cfg := rt.up.Config()
	args, callOpts, errRes, err := p.resolveReferences(ctx, r, rt, args)
	if err != nil {
		return nil, err
	}
	if errRes != nil {
		return errRes, nil // nothing was sent
	}
	params := map[string]any{"name": rt.orig}
	if len(args) > 0 {
		params["arguments"] = args
	}
	fm, pr, done := p.forwardMeta(ctx, s, r.Meta)
	defer done()
	if fm != nil {
		params["_meta"] = fm
	}
	start := time.Now()
	raw, rtype, err := p.forwardTyped(ctx, r, rt.up, "tools/call", rt.orig, params)
	if err != nil {
		var rerr *upstream.RPCError
		var tooLarge *upstream.TooLargeError
		var ir *upstream.InputRequired
		switch {
		case errors.As(err, &rerr) || errors.As(err, &ir) || ctx.Err() != nil:
			// An input-required answer is passed up as it came: it is
			// no result to divert or charge.
			return nil, err
		case errors.As(err, &tooLarge):
			return ToolError(fmt.Sprintf("the result of %s from upstream %q is %d bytes or more, over its max_result_bytes (%d, [mcp.servers.%s]): it was skipped unread. Ask for less (a filter, a page, a narrower query) or raise max_result_bytes.",
				rt.orig, cfg.Name, tooLarge.Size, tooLarge.Max, cfg.Name)), nil
		}
		if le, ok := upstream.LoginError(err); ok {
			if lr := loginRequired(le); lr != nil && s != nil && s.Capabilities().ElicitationURL {
				return nil, lr
			}
			// Only a person can fix it: say exactly what to do, not the
			// transport's chain of wrappers.
			if le.URL != "" {
				return ToolError(fmt.Sprintf("%s cannot be called: %v. Ask the user to open that URL in their own browser (the page asks them, not you, for their bearer token: only they can complete the login); the other servers' tools work meanwhile.", name, le)), nil
			}
			return ToolError(fmt.Sprintf("%s cannot be called: %v. Ask the user to run that command; the other servers' tools work meanwhile.", name, le)), nil
		}
		// The model reads what went wrong and may try again.
		msg := err.Error()
		if errors.Is(err, ErrUpstreamTimeout) {
			msg += "; try again or raise the timeout"
		}
		return ToolError(msg), nil
	}
	answered := time.Now()
	if out, isTask, terr := p.taskResult(raw, rtype, cfg.Name, rt.orig); isTask {
		// A task, not a result: its result comes with tasks/get.
		if terr != nil {
			return ToolError(terr.Error()), nil
		}
		return out, nil
	}
	// Secrets go before anything counts, stores or shows the result.
	raw, sec, err := p.redact(cfg, "result of "+rt.orig, raw)
	if err != nil {
		return ToolError(err.Error()), nil
	}
	p.tellMasked(r, sec)
	// A tool with no threshold is diverted only when its result does not
	// fit the agent's budget left ([divert.Account].Left).
	threshold, divertable := cfg.Threshold(rt.orig)
	if callOpts.Store {
		// Stored whatever its size, as the call asked: the pointer only.
		threshold, divertable = 1, true
	}
	agent := r.agent()
	var dc divert.Call
	appDivert(&dc, rt.app, cfg, r)
	if !divertable && !dc.AppOnly && !agent.Bounded() {
		// Nothing can divert it: passed on without building the rest.
		p.log.Debug("tools/call", "server", cfg.Name, "tool", rt.orig, "bytes", len(raw), "upstream", answered.Sub(start), "intercepted", false)
		return withRedactedMeta(raw, sec), nil
	}
	dc.Server, dc.Tool, dc.Result, dc.Owned, dc.Valid = cfg.Name, rt.orig, raw, true, true
	dc.Secrets, dc.Asked = sec.secrets(), callOpts.Store
	// What the listing says, whatever this call asked (catalogue.go
	// lists it for a tool diverted only over budget, or one whose
	// pointer keeps structuredContent).
	dc.SchemaListed = hasMember(rt.raw, "outputSchema")
	if !divertable {
		threshold = 0
	}
	rep := p.newDivertProgress(pr, len(raw))
	defer rep.stop()
	agent, decided := p.observed(ctx, agent, cfg.Name, rt.orig)
	_, ds := p.opts.Telemetry.StartDivert(ctx, cfg.Name, rt.orig)
	dc.Threshold, dc.Stage = threshold, rep.stage
	out, err := divert.Decide(dc, agent, divert.Options{ExactCountLimit: p.opts.ExactCountLimit, Logger: p.log})
	if err != nil {
		ds.End(telemetry.Outcome{Err: err, ErrorType: "invalid_result"})
		return ToolError(fmt.Sprintf("upstream %q returned an invalid tools/call result for %s: %v", cfg.Name, rt.orig, err)), nil
	}
	decided(out)
	if out.Diverted {
		ds.SetTokens(telemetry.Tokens{Counted: out.Pointer.Tokens, Diverted: out.Pointer.Tokens, BudgetLeft: -1})
		ds.SetFile(out.Pointer.Stored.Name)
	}
	if ds != nil {
		ds.End(telemetry.Outcome{IsError: !out.Diverted && isErrorResult(out.Result)})
	}
	if !out.Diverted {
		// The pointer says what was found in what it stored; a result
		// passed through says it in its _meta.
		out.Result = withRedactedMeta(out.Result, sec)
	}
	p.log.Debug("tools/call", "server", cfg.Name, "tool", rt.orig, "bytes", len(raw), "upstream", answered.Sub(start), "decide", time.Since(answered), "diverted", out.Diverted)
	r.chargedBy(out)
	return out.Result, nil
}

// ToolError is a tools/call result with isError and one text block.
func ToolError(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": msg}}, "isError": true})
	return b
}

// forward sends one client request on to u with the server's timeout,
// recording the call so that u's own requests reach this client. what
// names the request in errors (the method, or the tool called). The
// upstream's own JSON-RPC error comes back as an [*upstream.RPCError],
// the caller's cancellation as ctx's error.
func (p *Proxy) forward(ctx context.Context, r *Request, u *upstream.Upstream, method, what string, params any) (json.RawMessage, error) {
	raw, _, err := p.forwardTyped(ctx, r, u, method, what, params)
	return raw, err
}

// forwardTyped is forward that also returns the result's resultType
// ([upstream.Upstream.CallTyped]: a big result is not walked again to
// learn it).
func (p *Proxy) forwardTyped(ctx context.Context, r *Request, u *upstream.Upstream, method, what string, params any) (_ json.RawMessage, rtype string, err error) {
	cfg := u.Config()
	s := r.session()
	cctx, cancel := context.WithTimeout(context.WithValue(ctx, callerKey{}, s), cfg.Timeout)
	defer cancel()
	if s != nil {
		// A 2026-07-28 upstream is told the caller's capabilities with
		// every request; a 2025 one ignores this.
		// Only the extensions the proxy carries (extensions.go).
		cctx = upstream.WithClient(cctx, upstream.ClientMeta{Caps: carriedCaps(s.Capabilities().Raw), LogLevel: r.LogLevel})
	}
	end := p.sessions.begin(u, cctx, s)
	defer end()
	if level := r.LogLevel; level != "" && !p.isShared(u) {
		// A 2025 upstream logs nothing until told a level (a shared
		// one's logs are dropped: they are no one owner's).
		u.RaiseLogLevel(cctx, level)
	}
	r.continues(method, params)
	cctx, endSpan := p.startClient(cctx, cfg.Name, method, what, params)
	// The upstream's own errors and questions are masked as they come
	// (mask.go): no way on to the client goes around it.
	call := func() (json.RawMessage, string, error) {
		raw, rtype, err := u.CallTyped(cctx, method, params)
		return raw, rtype, p.maskError(cfg, what, err)
	}
	raw, rtype, err := call()
	if ir, ok := errors.AsType[*upstream.InputRequired](err); ok {
		if m, isMap := params.(map[string]any); isMap && canAsk(s, ir) {
			raw, rtype, err = p.fulfil(cctx, s, ir, m, call)
		}
	}
	if err == nil {
		endSpan(raw, nil)
		return raw, rtype, nil
	}
	defer func() { endSpan(nil, err) }()
	var rerr *upstream.RPCError
	var ir *upstream.InputRequired
	switch {
	case errors.As(err, &rerr):
		return nil, "", rerr
	case errors.As(err, &ir):
		return nil, "", ir // for the client to answer (inputrequired.go)
	case ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, "", fmt.Errorf("upstream %q did not answer %s within %s (timeout in [mcp.servers.%s]): %w", cfg.Name, what, cfg.Timeout, cfg.Name, ErrUpstreamTimeout)
	default:
		return nil, "", fmt.Errorf("calling %s on upstream %q failed: %w", what, cfg.Name, err)
	}
}

// Refresh re-lists, before a list request is answered, the listings of
// 2026-07-28 upstreams whose ttlMs has passed ([upstream.Upstream.Refresh],
// in parallel), waiting at most StartWait or until ctx ends: the catalogue
// is then as fresh as the upstreams said it may be kept. 2025 upstreams
// say when their listings change, so for them it returns at once.
func (p *Proxy) Refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, p.opts.StartWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := u.Refresh(ctx, upstream.KindAll); err != nil {
				p.log.Debug("refreshing listings", "server", u.Name(), "error", err)
			}
		}()
	}
	wg.Wait()
}

// resourceOwner is the upstream serving an exposed URI and its own name
// for it: the upstream listing it or a template matching it, else the
// only upstream offering resources, which a direct client would have
// asked.
func (p *Proxy) resourceOwner(exposed string) (*upstream.Upstream, string, bool) {
	if strings.HasPrefix(exposed, wire.SkillScheme) {
		// skill://<server>/…: that server's, listed or not (skills.go).
		if server, orig, ok := skills.Route(exposed); ok {
			for _, u := range p.ups {
				if u.Name() == server {
					return u, orig, true
				}
			}
		}
	}
	if u, orig, ok := p.cat.owner(exposed); ok {
		return u, orig, true
	}
	if su, orig, ok := p.skillUpstream(exposed); ok {
		return su.u, orig, true // <server>+<uri>: a skill of another scheme
	}
	var only *upstream.Upstream
	for _, u := range p.ups {
		if u.Capabilities().Resources != nil {
			if only != nil {
				return nil, "", false
			}
			only = u
		}
	}
	return only, exposed, only != nil
}

// ReadResource forwards resources/read for an exposed URI (listed, or
// matching a template, or served by the only upstream with resources).
func (p *Proxy) ReadResource(ctx context.Context, r *Request, uri string) (json.RawMessage, error) {
	s := r.session()
	u, orig, ok := p.resourceOwner(uri)
	if !ok {
		return nil, fmt.Errorf("%w: resource %s (no upstream lists it)", ErrNotFound, uri)
	}
	params := map[string]any{"uri": orig}
	fm, _, done := p.forwardMeta(ctx, s, r.Meta)
	defer done()
	if fm != nil {
		params["_meta"] = fm
	}
	raw, sec, err := p.forwardMasked(ctx, r, u, "resources/read", "resource "+orig, params)
	if err != nil {
		return nil, err
	}
	if ptr, diverted := p.divertOther(ctx, r, u.Config(), ResourceThresholdName, uri, raw, appPage(s, orig, raw)); diverted {
		return ptr, nil // the pointer, under the URI as the client knows it
	}
	raw = withRedactedMeta(raw, sec)
	rename := func(cu string) string { return strings.TrimSuffix(uri, orig) + cu }
	if x, ok := skills.Expose(u.Name(), orig); ok && x == uri {
		// A skill's file: the contents name it as the client knows it.
		rename = func(cu string) string {
			if x, ok := skills.Expose(u.Name(), cu); ok {
				return x
			}
			return cu
		}
	} else if uri == orig {
		return raw, nil
	}
	// A colliding URI: the contents name it as the client knows it.
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: resources/read from %q: %v", upstream.ErrInvalidResponse, u.Name(), err)
	}
	var contents []map[string]json.RawMessage
	if err := json.Unmarshal(res["contents"], &contents); err != nil {
		return nil, fmt.Errorf("%w: resources/read from %q: %v", upstream.ErrInvalidResponse, u.Name(), err)
	}
	for _, c := range contents {
		var cu string
		if json.Unmarshal(c["uri"], &cu) == nil {
			c["uri"] = mustJSON(rename(cu))
		}
	}
	res["contents"], _ = json.Marshal(contents)
	return json.Marshal(res)
}

// GetPrompt forwards prompts/get.
func (p *Proxy) GetPrompt(ctx context.Context, r *Request, name string, args map[string]string) (json.RawMessage, error) {
	rt := p.cat.prompt(name)
	if rt == nil {
		return nil, fmt.Errorf("%w: prompt %s (its upstream no longer lists it)", ErrNotFound, name)
	}
	params := map[string]any{"name": rt.orig}
	if args != nil {
		params["arguments"] = args
	}
	fm, _, done := p.forwardMeta(ctx, r.Session, r.Meta)
	defer done()
	if fm != nil {
		params["_meta"] = fm
	}
	raw, sec, err := p.forwardMasked(ctx, r, rt.up, "prompts/get", "prompt "+rt.orig, params)
	if err != nil {
		return nil, err
	}
	if ptr, diverted := p.divertOther(ctx, r, rt.up.Config(), PromptThresholdName, name, raw, false); diverted {
		return ptr, nil
	}
	return withRedactedMeta(raw, sec), nil
}

// HasPrompt reports whether name is an exposed upstream prompt.
func (p *Proxy) HasPrompt(name string) bool { return p.cat.prompt(name) != nil }

// Complete forwards completion/complete to the upstream owning the
// prompt or resource template that ref names (ref/prompt name or
// ref/resource uri, as exposed). ok is false when no upstream owns it or
// the owner offers no completions: the caller answers with no values.
func (p *Proxy) Complete(ctx context.Context, req *Request, refType, ref string, argument, context_ any) (raw json.RawMessage, ok bool, err error) {
	var rt *route
	var r map[string]any
	switch refType {
	case "ref/prompt":
		rt = p.cat.prompt(ref)
		if rt != nil {
			r = map[string]any{"type": refType, "name": rt.orig}
		}
	case "ref/resource":
		rt = p.cat.template(ref)
		if rt != nil {
			r = map[string]any{"type": refType, "uri": rt.orig}
		}
	}
	if rt == nil || rt.up.Capabilities().Completions == nil {
		return nil, false, nil
	}
	params := map[string]any{"ref": r, "argument": argument}
	if context_ != nil {
		params["context"] = context_
	}
	raw, err = p.forward(ctx, req, rt.up, "completion/complete", "completion/complete", params)
	if err != nil {
		return nil, false, err
	}
	raw, ok = p.mask(rt.up.Config(), "completion", raw)
	if !ok {
		return nil, false, nil
	}
	return raw, true, nil
}

// ListTools, ListResources, ListResourceTemplates and ListPrompts return
// the exposed upstream items as raw JSON, in the upstreams' order
// (servers in config order). In search mode ListTools holds only the
// tools of servers with listing = "always": see [Proxy.ListToolsWith].
func (p *Proxy) ListTools() []json.RawMessage { return p.ListToolsWith(nil) }

// ListToolsWith is ListTools plus, in search mode, the hidden tools found
// reports true for: those a session found with search_tools.
func (p *Proxy) ListToolsWith(found func(name string) bool) []json.RawMessage {
	raws, _ := p.cat.snapshot().tools.listed(found)
	return raws
}

// ListResources: see [Proxy.ListTools].
func (p *Proxy) ListResources() []json.RawMessage { return p.cat.snapshot().resources.raws() }

// ListResourceTemplates: see [Proxy.ListTools].
func (p *Proxy) ListResourceTemplates() []json.RawMessage {
	return p.cat.snapshot().templates.raws()
}

// ListPrompts: see [Proxy.ListTools].
func (p *Proxy) ListPrompts() []json.RawMessage { return p.cat.snapshot().prompts.raws() }

// Names returns the exposed names of each kind, for registering them
// with the MCP server (which announces changes). In search mode tools
// are those listed (see [Proxy.ListTools]).
func (p *Proxy) Names() (tools, resources, templates, prompts []string) {
	s := p.cat.snapshot()
	_, tools = s.tools.listed(nil)
	return tools, s.resources.order, s.templates.order, s.prompts.order
}

// SetLogLevel records the session's logging level and forwards the most
// verbose level any session asked for to every upstream that logs, in
// parallel, before returning: what the client does next is logged at
// the new level.
func (p *Proxy) SetLogLevel(ctx context.Context, s Session, level string) {
	min := p.sessions.setLevel(s.ID(), level)
	done := make(chan struct{}, len(p.ups))
	for _, u := range p.ups {
		if p.isShared(u) {
			// One owner's level is not every owner's; its logs are
			// dropped anyway.
			done <- struct{}{}
			continue
		}
		go func() {
			defer func() { done <- struct{}{} }()
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.Config().Timeout)
			defer cancel()
			u.SetLogLevel(lctx, min)
		}()
	}
	for range p.ups {
		<-done
	}
}

// Subscribe records the session's subscription to an exposed URI; the
// owning upstream is told when it is the first.
func (p *Proxy) Subscribe(ctx context.Context, s Session, uri string) {
	if p.sessions.subscribe(uri, s.ID()) {
		p.forwardSubscription(ctx, "resources/subscribe", uri)
	}
}

// Unsubscribe drops it; the owning upstream is told when it was the last.
func (p *Proxy) Unsubscribe(ctx context.Context, s Session, uri string) {
	if p.sessions.unsubscribe(uri, s.ID()) {
		if u, _, ok := p.resourceOwner(uri); ok && p.isShared(u) {
			return // another owner's sessions may still be subscribed
		}
		p.forwardSubscription(ctx, "resources/unsubscribe", uri)
	}
}

// forwardSubscription tells the upstream owning an exposed URI that the
// first client subscribed, or the last one left. An upstream error is
// logged: the client's subscription stands either way.
func (p *Proxy) forwardSubscription(ctx context.Context, method, exposed string) {
	u, orig, ok := p.resourceOwner(exposed)
	if !ok {
		return
	}
	if caps := u.Capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		p.log.Debug("upstream does not support resource subscriptions", "server", u.Name(), "uri", orig)
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.Config().Timeout)
	defer cancel()
	if _, err := u.Call(cctx, method, map[string]any{"uri": orig}); err != nil {
		p.log.Warn("forwarding "+method+" failed", "server", u.Name(), "uri", orig, "error", err)
	}
}

// RootsChanged tells every upstream that a client's roots changed: the
// upstream asks again (roots/list), and the request goes to whichever
// client has a call in flight on it.
func (p *Proxy) RootsChanged(ctx context.Context) {
	for _, u := range p.own {
		u.Notify(context.WithoutCancel(ctx), "notifications/roots/list_changed", nil)
	}
}

// AwaitingLogin names the upstreams whose tools are not listed because
// they wait for an OAuth login, with the command that logs in: a tool the
// client expected may be one of theirs. "" when none waits.
func (p *Proxy) AwaitingLogin() string {
	var msgs []string
	for _, u := range p.ups {
		if _, err := u.State(); err != nil {
			if le, ok := upstream.LoginError(err); ok && len(u.Tools()) == 0 {
				msgs = append(msgs, le.Error())
			}
		}
	}
	return strings.Join(msgs, "; ")
}

// LoginRequired is a call that can only succeed once the client's user
// has opened URL (an OAuth login through the server, for the owner of a
// bearer token). The server answers it with a URL elicitation (MCP
// 2025-11-25, error -32042) to a client that supports them; others get
// a tool error with the URL.
type LoginRequired struct {
	Server  string // the upstream that needs it
	URL     string
	Message string
	// ID names the elicitation: the same login has the same id, however
	// many calls met it.
	ID string
}

func (e *LoginRequired) Error() string { return e.Message }

func loginRequired(le *oauth.LoginError) *LoginRequired {
	if le.URL == "" {
		return nil
	}
	return &LoginRequired{
		Server: le.Server, URL: le.URL, ID: LoginElicitationID(le.URL),
		Message: fmt.Sprintf("Log in to %s (OAuth) to use its tools: open the URL (the page asks for your scratchpad-mcp bearer token, so that only you can complete the login), then call again.", le.Server),
	}
}

// LoginElicitationID is the elicitation id of the login at authURL: the
// same for every call that met it, so that its completion names it.
func LoginElicitationID(authURL string) string {
	sum := sha256.Sum256([]byte(authURL))
	return "login-" + hex.EncodeToString(sum[:8])
}

// PendingLogins are the logins through the server that upstreams waiting
// for one offer (see [LoginRequired]).
func (p *Proxy) PendingLogins() []*LoginRequired {
	var out []*LoginRequired
	for _, u := range p.ups {
		if _, err := u.State(); err != nil {
			if le, ok := upstream.LoginError(err); ok {
				if lr := loginRequired(le); lr != nil {
					out = append(out, lr)
				}
			}
		}
	}
	return out
}

// hasMember reports whether the JSON object raw has a member key.
func hasMember(raw json.RawMessage, key string) bool {
	_, ok := jsonscan.Lookup(raw, key)
	return ok
}
