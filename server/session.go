package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
)

// session is one client session: its go-sdk server (which holds exactly
// that one session), its own tools, and what the proxy must reach.
type session struct {
	srv   *Server
	id    string
	info  SessionInfo
	owner string // the bearer token's owner of the request that created it
	own   *Own
	mcp   *mcp.Server

	ownTools     map[string]bool
	ownExt       map[string]string // own tools needing a client extension (extensions.go)
	ownResExt    map[string]string // own resources needing one, by URI
	ownResources map[string]bool
	ownPrompts   map[string]bool
	wire         *rawWire      // over stdio: results written raw (rawwire.go)
	proxied      sync.Once     // attached to the proxy
	ended        chan struct{} // closed once end has run
	started      time.Time     // for mcp.server.session.duration
	outbox       *outbox       // notifications that belong to no request
	px           *proxy.Proxy  // what it forwards to; nil before its first request when acquired
	// caps is what the client declared at initialize, read once it is
	// known (every forwarded request and app tool asks): see Capabilities.
	caps    *proxy.ClientCapabilities
	release func() // gives px back, at the end
	// initialized: the client said initialized, or sent a request after
	// initialize; before, list changes are not told (quietUntilInitialized).
	initialized atomic.Bool

	// ctx ends when the session does, whoever ends it (DELETE, idle
	// timeout, shutdown, its client's stream or input closing), before
	// go-sdk closes it: go-sdk's close waits for the calls in flight,
	// which must be told to stop first (see [session.callContext]).
	ctx  context.Context
	stop context.CancelCauseFunc
	// clientGone, when not nil, is the transport's word on whether the
	// client that sent a request is still there to read its answer: a
	// context that ends when it left (streamable HTTP: the call's POST
	// and any resumption of its stream are gone). nil: not known.
	clientGone func(extra *mcp.RequestExtra) context.Context
	// relates says the transport carries what a handler sends on its
	// request's own stream (streamable HTTP, httpconn.go): the handler's
	// context says which request it serves. Over stdio and SSE there is
	// one stream, and what belongs to no answer goes through the outbox.
	relates bool
	// ids are the client's request ids on the session's connection
	// (ids.go): a request's id as sent, for its span. nil: not known.
	ids *callIDs

	mu         sync.Mutex
	ss         *mcp.ServerSession         // from the first request on
	registered map[string]map[string]bool // kind → upstream names registered with go-sdk
	watches    map[string]func()          // own resource URI → stop watching
	listed     bool                       // tools/list answered once
	found      map[string]bool            // in search mode: tools found with search_tools, listed from then on
	level      string                     // the client's logging/setLevel, "" before one (replica_recover.go keeps it)

	// changed, when not nil, is told after initialize and a level change
	// (the streamable HTTP handler keeps the session's record).
	changed func(ctx context.Context)
}

func (se *session) logLevel() string {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.level
}

func (se *session) setLogLevel(l string) {
	se.mu.Lock()
	se.level = l
	se.mu.Unlock()
}

func (s *Server) newSession(info SessionInfo) (*session, error) {
	own, err := s.opts.Session(info)
	if err != nil {
		return nil, err
	}
	if own == nil {
		own = &Own{}
	}
	se := &session{
		srv: s, id: info.ID, info: info, own: own,
		owner:    ownerOf(info.Request),
		ownTools: map[string]bool{}, ownExt: map[string]string{}, ownResExt: map[string]string{}, ownResources: map[string]bool{}, ownPrompts: map[string]bool{},
		registered: map[string]map[string]bool{},
		watches:    map[string]func(){},
		ended:      make(chan struct{}),
		started:    time.Now(),
	}
	se.ctx, se.stop = context.WithCancelCause(context.Background())
	se.outbox = newOutbox(s.log, se.id, se.ended)
	if own.Acquire == nil {
		se.px = s.opts.Proxy
	}
	instructions := s.opts.Instructions
	if own.Instructions != "" {
		instructions = own.Instructions
	}
	se.mcp = mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       s.sdkLog,
		GetSessionID: func() string { return se.id },
		// Declared in full here; the initialize answer narrows it to
		// what the proxy and its upstreams offer (see initialize).
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
		SubscribeHandler:        se.subscribe,
		UnsubscribeHandler:      se.unsubscribe,
		RootsListChangedHandler: func(ctx context.Context, _ *mcp.RootsListChangedRequest) { se.proxy().RootsChanged(ctx) },
		// From now on the client may be asked (roots, sampling…) and told
		// (log messages) by upstreams.
		InitializedHandler: func(context.Context, *mcp.InitializedRequest) { se.initialized.Store(true); se.attachProxy() },
	})
	bound := s.callTimeout()
	for _, d := range own.Tools {
		se.ownTools[d.Name] = true
		if d.Extension != "" {
			se.ownExt[d.Name] = d.Extension
		}
		se.mcp.AddTool(toolOf(d), ownToolHandler(d, bound))
	}
	for _, r := range own.Resources {
		se.ownResources[r.URI] = true
		if r.Extension != "" {
			se.ownResExt[r.URI] = r.Extension
		}
		se.mcp.AddResource(ownResource(r), ownResourceHandler(r, bound))
	}
	for _, p := range own.Prompts {
		se.ownPrompts[p.Name] = true
		se.mcp.AddPrompt(ownPrompt(p), ownPromptHandler(p, bound))
	}
	addSkillMethods(se.mcp) // skills.go
	se.syncUpstream(proxy.KindTools | proxy.KindResources | proxy.KindPrompts)
	// Outermost first: panics never take the server down, then routing.
	se.mcp.AddReceivingMiddleware(recovering(s.log), se.route)
	se.mcp.AddSendingMiddleware(se.quietUntilInitialized)
	return se, nil
}

// attach makes the session live at its first request, holding its
// owner's proxy from now on when it is acquired ([Own].Acquire).
func (se *session) attach(ss *mcp.ServerSession) {
	se.mu.Lock()
	if se.ss != nil {
		se.mu.Unlock()
		return
	}
	se.ss = ss
	if se.own.Acquire != nil {
		se.px, se.release = se.own.Acquire()
	}
	se.mu.Unlock()
	s := se.srv
	s.mu.Lock()
	s.sessions[se.id] = se
	s.mu.Unlock()
	// The catalogue may have changed since the server was made.
	se.syncUpstream(proxy.KindTools | proxy.KindResources | proxy.KindPrompts)
	go func() {
		_ = ss.Wait()
		se.end()
	}()
}

// quietUntilInitialized drops list-change notifications until the
// client is initialized: the upstreams the session registers while the
// initialize is answered would otherwise reach the client before (or
// just after) that answer, each kind once or more, telling it nothing it
// will not list anyway. MCP's lifecycle wants nothing but pings and logs
// before initialized.
func (se *session) quietUntilInitialized(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasSuffix(method, "/list_changed") && !se.initialized.Load() {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// attachProxy makes the session known to the proxy, once.
func (se *session) attachProxy() {
	se.proxied.Do(func() { se.proxy().Attach(se) })
}

// isFound reports whether the session found tool name with search_tools.
func (se *session) isFound(name string) bool {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.found[name]
}

// addFound lists the tools a search found from now on: registered with
// go-sdk, which tells a client that refreshes (tools/list_changed).
// Bounded: a session lists at most maxFound of them.
func (se *session) addFound(names []string) {
	se.mu.Lock()
	added := false
	for _, n := range names {
		if !se.found[n] && len(se.found) < maxFound {
			if se.found == nil {
				se.found = map[string]bool{}
			}
			se.found[n] = true
			added = true
		}
	}
	se.mu.Unlock()
	if added {
		se.syncUpstream(proxy.KindTools)
	}
}

// maxFound bounds the tools search adds to one session's listing: the
// listing must stay small, or search mode would not be worth it.
const maxFound = 64

// proxy is what the session forwards to: its owner's proxy once live.
func (se *session) proxy() *proxy.Proxy {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.px
}

// mcpSession is go-sdk's session, nil before the first request.
func (se *session) ownTool(name string) bool { return se.ownTools[name] && se.offers(name) }

// callContext is the context a request of the session is handled
// under: ctx (go-sdk's, which the client's notifications/cancelled
// ends), ended also when the session ends and when the client that sent
// it is gone. Every request passes here ([session.route]), own and
// forwarded alike; a forwarded call whose context ends is cancelled at
// its upstream, as a client's cancellation is. done must be called when
// the request is answered.
func (se *session) callContext(ctx context.Context, extra *mcp.RequestExtra) (_ context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopSession := context.AfterFunc(se.ctx, func() { cancel(context.Cause(se.ctx)) })
	stopClient := func() bool { return false }
	if se.clientGone != nil {
		if gone := se.clientGone(extra); gone != nil {
			stopClient = context.AfterFunc(gone, func() { cancel(context.Cause(gone)) })
		}
	}
	return ctx, func() {
		stopSession()
		stopClient()
		cancel(nil)
	}
}

// end forgets a session whose connection closed.
func (se *session) end() {
	se.stop(ErrSessionEnded)
	s := se.srv
	s.mu.Lock()
	delete(s.sessions, se.id)
	s.mu.Unlock()
	se.mu.Lock()
	for _, stop := range se.watches {
		stop()
	}
	se.watches = map[string]func(){}
	se.mu.Unlock()
	se.proxy().Detach(se.id)
	if se.release != nil {
		se.release()
	}
	if s.opts.SessionEnded != nil {
		s.opts.SessionEnded(se.id)
	}
	if tel := s.opts.Telemetry; tel != nil {
		version := ""
		if ss := se.serverSession(); ss != nil && ss.InitializeParams() != nil {
			version = ss.InitializeParams().ProtocolVersion
		}
		tel.SessionEnded(context.Background(), time.Since(se.started), version)
	}
	close(se.ended)
}

// upstreamNames reports which names of a kind ("tools", "resources",
// "templates", "prompts") are the proxy's, registered only so that go-sdk
// announces changes: listings leave them out of go-sdk's own items.
func (se *session) upstreamNames(kind string) map[string]bool {
	se.mu.Lock()
	defer se.mu.Unlock()
	out := make(map[string]bool, len(se.registered[kind]))
	for n := range se.registered[kind] {
		out[n] = true
	}
	return out
}

// syncUpstream registers the names the proxy exposes of kind with the
// session's go-sdk server, so that go-sdk announces changes
// (list_changed) and knows the tools exist. Listing, calling and reading
// them is done by [session.route] with the upstreams' raw JSON.
func (se *session) syncUpstream(kind proxy.Kind) {
	px := se.proxy()
	if px == nil {
		return // not live yet: its first request registers them
	}
	tools, resources, templates, prompts := px.Names()
	se.mu.Lock()
	defer se.mu.Unlock()
	if px.Searching() && len(se.found) > 0 {
		tools = append([]string(nil), tools...)
		for n := range se.found {
			if px.HasTool(n) {
				tools = append(tools, n)
			}
		}
	}
	diff := func(k string, names []string, add func(string) bool, remove func([]string)) {
		have := se.registered[k]
		if have == nil {
			have = map[string]bool{}
			se.registered[k] = have
		}
		want := map[string]bool{}
		for _, n := range names {
			want[n] = true
		}
		var gone []string
		for n := range have {
			if !want[n] {
				gone = append(gone, n)
				delete(have, n)
			}
		}
		if len(gone) > 0 {
			remove(gone)
		}
		for _, n := range names {
			if !have[n] && add(n) {
				have[n] = true
			}
		}
	}
	unreachable := func(what string) error {
		return fmt.Errorf("%s is served by the proxy", what)
	}
	if kind&proxy.KindTools != 0 {
		diff("tools", tools, func(n string) bool {
			se.mcp.AddTool(&mcp.Tool{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, unreachable(n) })
			return true
		}, func(n []string) { se.mcp.RemoveTools(n...) })
	}
	if kind&proxy.KindResources != 0 {
		diff("resources", resources, func(n string) bool {
			if u, err := url.Parse(n); err != nil || u.Scheme == "" {
				return false // listed raw, but go-sdk would refuse it
			}
			se.mcp.AddResource(&mcp.Resource{URI: n, Name: n},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return nil, unreachable(n)
				})
			return true
		}, func(n []string) { se.mcp.RemoveResources(n...) })
		diff("templates", templates, func(n string) bool {
			// The catalogue exposes only templates uritemplate parses,
			// the check go-sdk's AddResourceTemplate panics on.
			se.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: n, Name: n},
				func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return nil, unreachable(n)
				})
			return true
		}, func(n []string) { se.mcp.RemoveResourceTemplates(n...) })
	}
	if kind&proxy.KindPrompts != 0 {
		diff("prompts", prompts, func(n string) bool {
			se.mcp.AddPrompt(&mcp.Prompt{Name: n},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) { return nil, unreachable(n) })
			return true
		}, func(n []string) { se.mcp.RemovePrompts(n...) })
	}
}

// subscribe is go-sdk's SubscribeHandler: an own resource is watched, an
// upstream one is forwarded (once per URI across sessions).
func (se *session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	if se.ownResources[uri] {
		if se.own.Watch == nil {
			return nil
		}
		ctx = se.context(ctx, req.Extra)
		stop := se.own.Watch(ctx, uri, func() {
			_ = se.mcp.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		})
		se.mu.Lock()
		if prev := se.watches[uri]; prev != nil {
			prev()
		}
		se.watches[uri] = stop
		se.mu.Unlock()
		return nil
	}
	se.proxy().Subscribe(ctx, se, uri)
	return nil
}

func (se *session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	uri := req.Params.URI
	if se.ownResources[uri] {
		se.mu.Lock()
		stop := se.watches[uri]
		delete(se.watches, uri)
		se.mu.Unlock()
		if stop != nil {
			stop()
		}
		return nil
	}
	se.proxy().Unsubscribe(ctx, se, uri)
	return nil
}

// context adds what the session's handlers need to ctx.
func (se *session) context(ctx context.Context, extra *mcp.RequestExtra) context.Context {
	if se.own.Context == nil {
		return ctx
	}
	var h http.Header
	if extra != nil {
		h = extra.Header
	}
	return se.own.Context(ctx, h)
}

// ID implements [proxy.Session].
func (se *session) ID() string { return se.id }

func (se *session) serverSession() *mcp.ServerSession {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.ss
}

// Capabilities implements [proxy.Session]: what the client declared at
// initialize, which does not change after, so it is read once.
func (se *session) Capabilities() proxy.ClientCapabilities {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.caps == nil {
		if se.ss == nil {
			return proxy.ClientCapabilities{}
		}
		p := se.ss.InitializeParams()
		if p == nil || p.Capabilities == nil {
			return proxy.ClientCapabilities{}
		}
		c := clientCaps(p.Capabilities)
		se.caps = &c
	}
	return *se.caps
}

func clientCaps(c *mcp.ClientCapabilities) proxy.ClientCapabilities {
	out := proxy.ClientCapabilities{
		Sampling:    c.Sampling != nil,
		Elicitation: c.Elicitation != nil,
		Roots:       c.RootsV2 != nil,
	}
	out.ElicitationURL = c.Elicitation != nil && c.Elicitation.URL != nil
	raw := map[string]any{}
	if c.Sampling != nil {
		raw["sampling"] = c.Sampling
	}
	if c.Elicitation != nil {
		raw["elicitation"] = c.Elicitation
	}
	if c.RootsV2 != nil {
		raw["roots"] = c.RootsV2
	}
	if len(c.Extensions) > 0 {
		// Extensions (MCP Apps, skills) reach the upstreams the proxy
		// carries them to (proxy/extensions.go).
		raw["extensions"] = c.Extensions
		out.Extensions = make(map[string]json.RawMessage, len(c.Extensions))
		for id, v := range c.Extensions {
			out.Extensions[id], _ = json.Marshal(v)
		}
	}
	out.Raw, _ = json.Marshal(raw)
	return out
}

// Request implements [proxy.Session]: the upstream's raw params are
// decoded into go-sdk's types, which send them on the session (inside a
// call, on that call's stream) and cancel them at the client when ctx
// ends.
func (se *session) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	ss := se.serverSession()
	if ss == nil {
		return nil, errors.New("the client session is not initialized")
	}
	var res any
	var err error
	switch method {
	case "sampling/createMessage":
		var probe struct {
			Tools json.RawMessage `json:"tools"`
		}
		_ = json.Unmarshal(params, &probe)
		if len(probe.Tools) > 0 {
			var p mcp.CreateMessageWithToolsParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, invalidParams(err)
			}
			res, err = ss.CreateMessageWithTools(ctx, &p)
		} else {
			var p mcp.CreateMessageParams
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, invalidParams(err)
			}
			res, err = ss.CreateMessage(ctx, &p)
		}
	case "elicitation/create":
		var p mcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, invalidParams(err)
		}
		res, err = ss.Elicit(ctx, &p)
	case "roots/list":
		res, err = ss.ListRoots(ctx, &mcp.ListRootsParams{})
	default:
		return nil, fmt.Errorf("%s cannot be forwarded to a client", method)
	}
	if err != nil {
		return nil, rpcError(err)
	}
	return json.Marshal(res)
}

// Notify implements [proxy.Session]. Progress goes at once on its
// request's stream (it must precede the result); what belongs to no
// request is queued for the session's own stream ([outbox]), so a
// client that stops reading holds no one else.
func (se *session) Notify(ctx context.Context, method string, params json.RawMessage) error {
	ss := se.serverSession()
	if ss == nil {
		return errors.New("the client session is not initialized")
	}
	var send func(ctx context.Context) error
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return err
		}
		return ss.NotifyProgress(ctx, &p)
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return err
		}
		send = func(ctx context.Context) error { return ss.Log(ctx, &p) } //nolint:staticcheck // logging is what the upstream sent
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if err := json.Unmarshal(params, &p); err != nil {
			return err
		}
		send = func(ctx context.Context) error { return se.mcp.ResourceUpdated(ctx, &p) }
	case "notifications/elicitation/complete":
		var p mcp.ElicitationCompleteParams
		if err := json.Unmarshal(params, &p); err != nil {
			return err
		}
		send = func(ctx context.Context) error { return ss.NotifyElicitationComplete(ctx, &p) }
	default:
		return fmt.Errorf("%s is not forwarded to clients", method)
	}
	if _, related := ctx.Value(relatedKey{}).(*mcp.RequestExtra); related {
		return send(ctx)
	}
	se.outbox.send(method, send)
	return nil
}
