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
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// route is the session's receiving middleware: go-sdk serves the
// protocol and the server's own tools, resources and prompts; what the
// upstreams offer is listed, called, read and completed here, with their
// raw JSON.
func (se *session) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
			se.attach(ss)
		}
		if !strings.HasPrefix(method, "notifications/") {
			// A request: it stops when its client goes or its session
			// ends, not only when the client cancels it.
			var done func()
			ctx, done = se.callContext(ctx, req.GetExtra())
			defer done()
		}
		// What the handler sends goes to the request's own stream
		// (httpconn.go).
		ctx = withRelated(se.context(ctx, req.GetExtra()), req.GetExtra())
		px := se.proxy()
		if method != "initialize" {
			if se.srv.opts.StartUpstreams != nil {
				// A client of the 2026-07-28 protocol sends no initialize:
				// start the upstreams with its first request, offering all.
				px.Start(se.srv.opts.StartUpstreams, nil)
			}
			// Initialized (or a 2026-07-28 client, which never says so):
			// upstreams may now ask and tell it things.
			se.attachProxy()
		}
		switch method {
		case "initialize":
			return se.initialize(ctx, method, req, next)
		case "logging/setLevel":
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				px.SetLogLevel(ctx, se, string(p.Level))
			}
		case "tools/list":
			se.mu.Lock()
			first := !se.listed
			se.listed = true
			se.mu.Unlock()
			if first {
				// A client usually lists tools once, right after
				// initialize: hold that answer until upstreams still
				// starting are up (or failed), bounded. Later changes
				// reach it as list_changed.
				px.AwaitStarted(ctx, 0)
			}
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			ups := se.upstreamNames("tools")
			var own []*mcp.Tool
			for _, t := range res.(*mcp.ListToolsResult).Tools {
				if !ups[t.Name] {
					own = append(own, t)
				}
			}
			listed := px.ListTools()
			if px.Searching() {
				listed = append(append([]json.RawMessage(nil), px.SearchDefs()...), px.ListToolsWith(se.isFound)...)
			}
			raw, err := listJSON("tools", own, listed)
			return &rawListTools{raw: raw}, err
		case "tools/call":
			p, _ := req.GetParams().(*mcp.CallToolParamsRaw)
			if p == nil {
				break
			}
			c, raw, err := se.srv.callTool(ctx, toolCall{px: px, sess: se, own: se.ownTool, found: se.addFound}, p.Name, p.Arguments, map[string]any(p.Meta))
			switch {
			case err != nil:
				return nil, err
			case raw == nil:
				return next(c, method, req) // own tool: go-sdk's handler runs it
			}
			return &rawCallTool{raw: raw, wire: se.wire}, nil
		case "resources/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			ups := se.upstreamNames("resources")
			var own []*mcp.Resource
			for _, r := range res.(*mcp.ListResourcesResult).Resources {
				if !ups[r.URI] {
					own = append(own, r)
				}
			}
			raw, err := listJSON("resources", own, px.ListResources())
			return &rawListResources{raw: raw}, err
		case "resources/templates/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			ups := se.upstreamNames("templates")
			var own []*mcp.ResourceTemplate
			for _, t := range res.(*mcp.ListResourceTemplatesResult).ResourceTemplates {
				if !ups[t.URITemplate] {
					own = append(own, t)
				}
			}
			raw, err := listJSON("resourceTemplates", own, px.ListResourceTemplates())
			return &rawListTemplates{raw: raw}, err
		case "resources/read":
			p, _ := req.GetParams().(*mcp.ReadResourceParams)
			if p == nil || se.ownResources[p.URI] {
				break
			}
			raw, err := px.ReadResource(ctx, se, p.URI, p.Meta)
			if err != nil {
				return nil, clientError(err)
			}
			return &rawReadResource{raw: raw}, nil
		case "prompts/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			ups := se.upstreamNames("prompts")
			var own []*mcp.Prompt
			for _, p := range res.(*mcp.ListPromptsResult).Prompts {
				if !ups[p.Name] {
					own = append(own, p)
				}
			}
			raw, err := listJSON("prompts", own, px.ListPrompts())
			return &rawListPrompts{raw: raw}, err
		case "prompts/get":
			p, _ := req.GetParams().(*mcp.GetPromptParams)
			if p == nil || se.ownPrompts[p.Name] || !px.HasPrompt(p.Name) {
				break
			}
			raw, err := px.GetPrompt(ctx, se, p.Name, p.Arguments, p.Meta)
			if err != nil {
				return nil, clientError(err)
			}
			return &rawGetPrompt{raw: raw}, nil
		case "completion/complete":
			p, _ := req.GetParams().(*mcp.CompleteParams)
			if p == nil || p.Ref == nil {
				break
			}
			ref := p.Ref.Name
			if p.Ref.Type == "ref/resource" {
				ref = p.Ref.URI
			}
			var cctx any
			if p.Context != nil && len(p.Context.Arguments) > 0 {
				cctx = p.Context
			}
			raw, ok, err := px.Complete(ctx, se, p.Ref.Type, ref, p.Argument, cctx)
			if err != nil {
				return nil, clientError(err)
			}
			if !ok {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
			}
			return &rawComplete{raw: raw}, nil
		}
		return next(ctx, method, req)
	}
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
