package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// route is the session's receiving middleware: go-sdk serves the 2025
// protocol and the server's own tools, resources and prompts; what the
// upstreams offer is listed, called, read and completed by one small
// function per method ([methods2025]), with their raw JSON. (A
// 2026-07-28 request never reaches go-sdk: rev20260728_methods.go.)
func (se *session) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			se.attach(ss)
		}
		if !strings.HasPrefix(method, "notifications/") {
			defer se.srv.calls.begin()()
			// A request: it stops when its client goes or its session
			// ends, not only when the client cancels it.
			var done func()
			ctx, done = se.callContext(ctx, req.GetExtra())
			defer done()
		}
		// What the handler sends goes to the request's own stream
		// (httpconn.go).
		ctx = se.context(ctx, req.GetExtra())
		if se.relates {
			ctx = withRelated(ctx, req.GetExtra())
		}
		if method != "initialize" && !strings.HasPrefix(method, "notifications/") {
			// A request after initialize: initialized, said or not.
			se.initialized.Store(true)
		}
		if method != "initialize" {
			if se.srv.opts.StartUpstreams != nil {
				// A client that skipped initialize: start the upstreams
				// with its first request, offering all.
				se.proxy().Start(se.srv.opts.StartUpstreams, nil)
			}
			// Initialized (or a client that never says so): upstreams
			// may now ask and tell it things.
			se.attachProxy()
		}
		if se.srv.opts.Telemetry != nil && !strings.HasPrefix(method, "notifications/") {
			// Every request of a 2025 session passes here: its span.
			tr := se.request2025(method, req)
			var sp *telemetry.Span
			ctx, sp = se.srv.startRequest(ctx, tr)
			res, err := se.serve(ctx, method, req, next)
			se.srv.endRequest(ctx, sp, tr, method == "tools/call" && isError2025(res), err)
			return res, err
		}
		return se.serve(ctx, method, req, next)
	}
}

// serve answers one request: by the method's own function, or go-sdk's.
func (se *session) serve(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if m := methods2025[method]; m != nil {
		res, err := m(se, ctx, method, req, next)
		if err == nil && (method == "initialize" || method == "logging/setLevel") && se.changed != nil {
			// Kept for other replicas before the client hears the
			// answer: its next request may reach one (replica_recover.go).
			se.changed(ctx)
		}
		return res, err
	}
	return next(ctx, method, req)
}

// method2025 serves one method of a 2025 session: what the upstreams
// offer is added to go-sdk's answer (next), or answered instead of it.
type method2025 func(se *session, ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error)

var methods2025 = map[string]method2025{
	"initialize":               (*session).initialize,
	"logging/setLevel":         (*session).setLevel,
	"tools/list":               (*session).toolsList,
	"tools/call":               (*session).toolsCall,
	"resources/list":           (*session).resourcesList,
	"resources/templates/list": (*session).templatesList,
	"resources/read":           (*session).resourcesRead,
	"prompts/list":             (*session).promptsList,
	"prompts/get":              (*session).promptsGet,
	"completion/complete":      (*session).complete,
	wire.MethodSkillsList:      (*session).skills2025,
	wire.MethodSkillsGet:       (*session).skills2025,
	wire.MethodDirectoryRead:   (*session).skills2025,
}

func (se *session) setLevel(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
		se.proxy().SetLogLevel(ctx, se, string(p.Level))
		se.setLogLevel(string(p.Level))
	}
	return next(ctx, method, req)
}

func (se *session) toolsList(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	px := se.proxy()
	se.mu.Lock()
	first := !se.listed
	se.listed = true
	se.mu.Unlock()
	if first {
		// A client usually lists tools once, right after initialize:
		// hold that answer until every upstream still starting is up (or
		// failed), bounded. Later changes reach it as list_changed.
		px.AwaitAll(ctx)
	}
	px.Refresh(ctx)
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	own := se.offeredTools(ownOnly(se, "tools", res.(*mcp.ListToolsResult).Tools, func(t *mcp.Tool) string { return t.Name }))
	listed := px.ListTools()
	if px.Searching() {
		listed = append(append([]json.RawMessage(nil), px.SearchDefs()...), px.ListToolsWith(se.isFound)...)
	}
	raw, err := listJSON("tools", own, listed)
	if err == nil && se.own.Listed != nil {
		se.own.Listed(raw)
	}
	return &rawListTools{raw: raw}, err
}

func (se *session) toolsCall(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	p, _ := req.GetParams().(*mcp.CallToolParamsRaw)
	if p == nil {
		return next(ctx, method, req)
	}
	c, raw, err := se.srv.callTool(ctx, toolCall{px: se.proxy(), sess: se, own: se.ownTool, found: se.addFound}, p.Name, p.Arguments, map[string]any(p.Meta))
	if ir, ok := errors.AsType[*upstream.InputRequired](err); ok {
		// The proxy asks a session what it declared it can answer
		// (proxy/inputrequired.go); this client declared less.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: %v, which this client did not declare it can answer (its initialize capabilities)", p.Name, ir)}
	}
	switch {
	case err != nil:
		return nil, err
	case raw == nil:
		return next(c, method, req) // own tool: go-sdk's handler runs it
	}
	return &rawCallTool{raw: raw, wire: se.wire}, nil
}

func (se *session) resourcesList(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	se.proxy().Refresh(ctx)
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	own := se.offeredResources(ownOnly(se, "resources", res.(*mcp.ListResourcesResult).Resources, func(r *mcp.Resource) string { return r.URI }))
	raw, err := listJSON("resources", own, se.proxy().ListResources())
	return &rawListResources{raw: raw}, err
}

func (se *session) templatesList(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	se.proxy().Refresh(ctx)
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	own := ownOnly(se, "templates", res.(*mcp.ListResourceTemplatesResult).ResourceTemplates, func(t *mcp.ResourceTemplate) string { return t.URITemplate })
	raw, err := listJSON("resourceTemplates", own, se.proxy().ListResourceTemplates())
	return &rawListTemplates{raw: raw}, err
}

func (se *session) resourcesRead(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	p, _ := req.GetParams().(*mcp.ReadResourceParams)
	if p == nil || se.ownResources[p.URI] && se.declares(se.ownResExt[p.URI]) {
		return next(ctx, method, req)
	}
	if raw, ok := skills.Own().Read(p.URI); ok {
		return &rawReadResource{raw: raw}, nil
	}
	ctx, pr, err := se.srv.proxyRequest(ctx, se, p.Meta, nil, agentOf)
	if err != nil {
		return nil, err
	}
	raw, err := se.proxy().ReadResource(ctx, pr, p.URI)
	if err != nil {
		return nil, clientError(err)
	}
	return &rawReadResource{raw: raw}, nil
}

func (se *session) promptsList(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	se.proxy().Refresh(ctx)
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	own := ownOnly(se, "prompts", res.(*mcp.ListPromptsResult).Prompts, func(p *mcp.Prompt) string { return p.Name })
	raw, err := listJSON("prompts", own, se.proxy().ListPrompts())
	return &rawListPrompts{raw: raw}, err
}

func (se *session) promptsGet(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	px := se.proxy()
	p, _ := req.GetParams().(*mcp.GetPromptParams)
	if p == nil || se.ownPrompts[p.Name] || !px.HasPrompt(p.Name) {
		return next(ctx, method, req)
	}
	ctx, pr, err := se.srv.proxyRequest(ctx, se, p.Meta, nil, agentOf)
	if err != nil {
		return nil, err
	}
	raw, err := px.GetPrompt(ctx, pr, p.Name, p.Arguments)
	if err != nil {
		return nil, clientError(err)
	}
	return &rawGetPrompt{raw: raw}, nil
}

func (se *session) complete(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	p, _ := req.GetParams().(*mcp.CompleteParams)
	if p == nil || p.Ref == nil {
		return next(ctx, method, req)
	}
	ref, cctx := completion(p)
	ctx, pr, err := se.srv.proxyRequest(ctx, se, nil, nil, hostOf)
	if err != nil {
		return nil, err
	}
	raw, ok, err := se.proxy().Complete(ctx, pr, p.Ref.Type, ref, p.Argument, cctx)
	if err != nil {
		return nil, clientError(err)
	}
	if !ok {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	return &rawComplete{raw: raw}, nil
}

// ownOnly is items of go-sdk's listing of kind without the upstream
// names registered with it ([session.syncUpstream]), which the proxy
// lists raw.
func ownOnly[T any](se *session, kind string, items []T, name func(T) string) []T {
	ups := se.upstreamNames(kind)
	var own []T
	for _, it := range items {
		if !ups[name(it)] {
			own = append(own, it)
		}
	}
	return own
}

// completion is what a completion/complete names (a prompt's name or a
// resource's URI) and its context, when it has arguments.
func completion(p *mcp.CompleteParams) (ref string, cctx any) {
	ref = p.Ref.Name
	if p.Ref.Type == "ref/resource" {
		ref = p.Ref.URI
	}
	if p.Context != nil && len(p.Context.Arguments) > 0 {
		cctx = p.Context
	}
	return ref, cctx
}

// initialize starts the upstreams with what a single client declared
// (stdio), waits (bounded) for upstreams still starting, and declares the
// server's own capabilities plus the union of the upstreams'.
func (se *session) initialize(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	px := se.proxy()
	if sctx := se.srv.opts.StartUpstreams; sctx != nil {
		offer := proxy.DefaultOffer()
		if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil && p.Capabilities != nil {
			offer = proxy.MirrorOffer(clientCaps(p.Capabilities).Raw)
		}
		px.Start(sctx, offer)
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	init, ok := res.(*mcp.InitializeResult)
	if !ok {
		return res, nil
	}
	px.AwaitStarted(ctx, 0)
	init.Capabilities = capabilities(se.own, px)
	p, _ := req.GetParams().(*mcp.InitializeParams)
	declareSkills(init.Capabilities, p != nil && declares2025(p.Capabilities, wire.ExtensionSkills))
	m := se.srv.opts.InitializeMeta
	if se.own.InitializeMeta != nil {
		m = se.own.InitializeMeta
	}
	if m != nil {
		if init.Meta == nil {
			init.Meta = mcp.Meta{}
		}
		for k, v := range m {
			init.Meta[k] = v
		}
	}
	return init, nil
}

// clientError is what a client is answered when forwarding fails: an
// upstream's JSON-RPC error with its own code, message and data; a name
// no upstream exposes as invalid params; anything else as an internal
// error naming the upstream.
func clientError(err error) error {
	var rerr *upstream.RPCError
	if errors.As(err, &rerr) {
		return &jsonrpc.Error{Code: int64(rerr.Code), Message: rerr.Message, Data: rerr.Data}
	}
	if errors.Is(err, proxy.ErrNotFound) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	if lr, ok := errors.AsType[*proxy.LoginRequired](err); ok {
		return urlElicitation([]*proxy.LoginRequired{lr})
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// toolError is a tool result the model reads: the call failed.
// nameEcho bounds how much of a name the client sent an error repeats.
const nameEcho = 80

// quoteName is a name as an error repeats it: quoted, cut to nameEcho
// bytes.
func quoteName(name string) string { return strconv.Quote(tool.Clip(name, nameEcho)) }

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}

// recovering turns a panic in any handler into an internal error: one
// bad request (or bad upstream data) must not take down a server shared
// by many agents.
func recovering(log interface{ Error(string, ...any) }) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if r := recover(); r != nil {
					log.Error("handler panicked", "method", method, "panic", r)
					res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed unexpectedly: %v", method, r)}
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// urlElicitation is the URL elicitation error (-32042) that asks the
// client's user to open each login's URL before calling again.
func urlElicitation(logins []*proxy.LoginRequired) error {
	el := make([]*mcp.ElicitParams, len(logins))
	for i, lr := range logins {
		el[i] = &mcp.ElicitParams{Mode: "url", URL: lr.URL, Message: lr.Message, ElicitationID: lr.ID}
	}
	return mcp.URLElicitationRequiredError(el)
}
