package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The 2026-07-28 methods: one small function each, over a request whose
// envelope the transport checked ([request20260728]). They never reach
// go-sdk, which serves 2025 sessions only; what they share with a 2025
// session's methods (the forwarded call, the capabilities) is one
// function both call ([Server.callTool], [capabilities]).

// request20260728 is one checked 2026-07-28 request.
type request20260728 struct {
	id     json.RawMessage // as sent
	method string
	params json.RawMessage
	env    wire.Envelope
	header http.Header // nil over stdio
	out    responder
	ag     *agent20260728
}

// responder is where a request's answer goes, and the notifications
// that belong to it (progress) before it: one HTTP response, or lines
// on stdio. Each method is called once at most after the other, under
// the caller's serialization (exchange and stdio lock their writers).
type responder interface {
	// notify sends a notification related to the request.
	notify(method string, params json.RawMessage) error
	// result answers the request with a raw result object.
	result(raw []byte) error
	// fail answers the request with an error.
	fail(e *wire.Error) error
}

// method20260728 answers one method: a raw result, or an error for the
// client.
type method20260728 func(s *Server, ctx context.Context, r *request20260728) ([]byte, error)

var methods20260728 = map[string]method20260728{
	"server/discover":          (*Server).discover,
	"tools/list":               (*Server).toolsList20260728,
	"tools/call":               (*Server).toolsCall20260728,
	"resources/list":           (*Server).resourcesList20260728,
	"resources/templates/list": (*Server).templatesList20260728,
	"resources/read":           (*Server).resourcesRead20260728,
	"prompts/list":             (*Server).promptsList20260728,
	"prompts/get":              (*Server).promptsGet20260728,
	"completion/complete":      (*Server).complete20260728,
	"subscriptions/listen":     (*Server).listen20260728,
	"tasks/get":                (*Server).task20260728,
	"tasks/update":             (*Server).task20260728,
	"tasks/cancel":             (*Server).task20260728,
	wire.MethodSkillsList:      (*Server).skills20260728,
	wire.MethodSkillsGet:       (*Server).skills20260728,
	wire.MethodDirectoryRead:   (*Server).skills20260728,
}

// serve20260728 answers r: its method runs under ctx (which ends when the
// client is gone, the call's bound passes or the server shuts down), its
// result is stamped with what every 2026-07-28 result carries.
func (s *Server) serve20260728(ctx context.Context, r *request20260728) {
	if r.method != "subscriptions/listen" {
		defer s.calls.begin()() // a listen is not work a drain waits for
	}
	if werr := wire.Negotiated(r.method, r.env.Caps.Declares); werr != nil {
		// An extension's method, for a client that did not declare it.
		_ = r.out.fail(werr)
		return
	}
	m := methods20260728[r.method]
	if m == nil {
		// Known to the wire, served by no function here (the tasks
		// extension, subscriptions/listen): not offered.
		_ = r.out.fail(wire.MethodNotFound(r.method))
		return
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(s.ctx, func() { cancel(context.Cause(s.ctx)) })()
	// The agent's end (its owner revoked, evicted) ends its requests.
	defer context.AfterFunc(r.ag.ctx, func() { cancel(context.Cause(r.ag.ctx)) })()
	if r.ag.own.Context != nil {
		ctx = r.ag.own.Context(ctx, r.header)
	}
	var sp *telemetry.Span
	var tr request
	if s.opts.Telemetry != nil {
		// Every 2026-07-28 request passes here: its span.
		tr = s.request20260728Of(ctx, r)
		ctx, sp = s.startRequest(ctx, tr)
	}
	raw, err := s.run20260728(m, ctx, r)
	if err != nil {
		// Ended by its agent, the server or its context: the answer says
		// why (its owner revoked, the server's end), not just "context
		// canceled". The agent and the server are asked first: their end
		// reaches ctx through an AfterFunc's goroutine, and what they
		// tear down (an owner's upstream sessions) may fail the call
		// before that.
		for _, c := range []context.Context{r.ag.ctx, s.ctx, ctx} {
			if c.Err() != nil {
				err = context.Cause(c)
				break
			}
		}
	}
	if sp != nil {
		s.endRequest(ctx, sp, tr, err == nil && r.method == "tools/call" && rawIsError(raw), err)
	}
	if err != nil {
		_ = r.out.fail(error20260728(err))
		return
	}
	st := wire.Stamping{ResultType: wire.ResultComplete, ServerInfo: s.serverInfo()}
	if wire.Cacheable(r.method) && wire.ParseResultType(raw) == wire.ResultComplete {
		c := s.cacheHint(r, raw)
		st.Cache = &c
	}
	out, err := wire.Stamp(raw, st)
	if err != nil {
		_ = r.out.fail(&wire.Error{Code: wire.CodeInternalError, Message: fmt.Sprintf("%s: the result is not a JSON object: %v", r.method, err), Status: http.StatusOK})
		return
	}
	_ = r.out.result(out)
}

// run20260728 runs a method, a panic being its error, not the server's end.
func (s *Server) run20260728(m method20260728, ctx context.Context, r *request20260728) (raw []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler panicked", "method", r.method, "panic", p)
			raw, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed unexpectedly: %v", r.method, p)}
		}
	}()
	return m(s, ctx, r)
}

// error20260728 is a method's error as a 2026-07-28 answer: a JSON-RPC
// error keeps its code, message and data; a cancelled call says why.
func error20260728(err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &wire.Error{Code: int(je.Code), Message: je.Message, Data: je.Data, Status: wire.StatusOf(int(je.Code))}
	}
	return &wire.Error{Code: wire.CodeInternalError, Message: err.Error(), Status: http.StatusOK}
}

// serverInfo is the Implementation every 2026-07-28 result names in
// _meta.
func (s *Server) serverInfo() json.RawMessage {
	b, _ := json.Marshal(mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version})
	return b
}

// cacheHint is a cacheable result's ttlMs and cacheScope. Nothing here
// is cached by time (ttlMs 0: ask again), and an answer is public only
// where it cannot depend on who asks: the server's own tools depend on
// the agent's role, search mode on the listing, and with owners each has
// its own upstreams.
func (s *Server) cacheHint(r *request20260728, raw []byte) wire.Cache {
	c := wire.Cache{TTLMs: 0, Scope: wire.ScopePrivate}
	perOwner := r.ag.own.Acquire != nil
	switch r.method {
	case "server/discover", "prompts/list", "resources/templates/list", "resources/list":
		if !perOwner {
			c.Scope = wire.ScopePublic
		}
	case "resources/read":
		var p struct {
			URI string `json:"uri"`
		}
		_ = wire.Unmarshal(r.params, &p)
		// A pointer names a file of this agent's: never shared.
		if _, own := r.ag.resources[p.URI]; !own && !perOwner && !proxy.IsDiverted(raw) {
			c.Scope = wire.ScopePublic
		}
	}
	return c
}

// withoutEnvelope is params' _meta without the envelope's keys, which
// are the proxy's to send upstream, not the client's ([wire.Envelope]);
// the rest (progressToken, a client's own keys) goes on.
func withoutEnvelope(meta map[string]any) map[string]any {
	for _, k := range []string{wire.MetaProtocolVersion, wire.MetaClientCapabilities, wire.MetaClientInfo, wire.MetaLogLevel} {
		delete(meta, k)
	}
	return meta
}

// decodeParams decodes a request's params into v, strictly
// ([wire.Unmarshal]: exact keys, none twice); -32602 when they are not
// what the method takes.
func decodeParams(r *request20260728, v any) error {
	if len(r.params) == 0 {
		return nil
	}
	if err := wire.Unmarshal(r.params, v); err != nil {
		return wire.InvalidParams("invalid params for %s: %v", r.method, err)
	}
	return nil
}

func (s *Server) discover(ctx context.Context, r *request20260728) ([]byte, error) {
	// Not every upstream: a probe (TS SDK's auto mode) gives up after a
	// few seconds; one not yet connected counts as offering everything.
	r.ag.px.AwaitStarted(ctx, 0)
	c := capabilities(r.ag.own, r.ag.px)
	declareSkills(c, r.env.Caps.Declares(wire.ExtensionSkills))
	caps, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	instructions := s.opts.Instructions
	if r.ag.own.Instructions != "" {
		instructions = r.ag.own.Instructions
	}
	return wire.EncodeDiscover(wire.Discover{SupportedVersions: wire.Served(), Capabilities: caps, Instructions: instructions})
}

func (s *Server) toolsList20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	px := r.ag.px
	if r.ag.firstListing() {
		// As a session's first listing: every upstream still starting
		// is waited for (bounded), for a client that lists once.
		px.AwaitAll(ctx)
	}
	listed(ctx, px)
	own := r.ag.ownTools()
	defs := make([]*mcp.Tool, 0, len(own))
	for _, d := range own {
		if offers20260728(r, d.Extension) {
			defs = append(defs, toolOf(d))
		}
	}
	listed := px.ListTools()
	if px.Searching() {
		// The listing is the same on every request: found tools are
		// run with call_tool, their schema given by search_tools'
		// describe; servers with listing = "always" are listed still
		// (ListTools holds only theirs in search mode).
		listed = append(append([]json.RawMessage(nil), px.SearchDefs()...), listed...)
	}
	raw, err := listJSON("tools", defs, listed)
	if err == nil && r.ag.own.Listed != nil {
		r.ag.own.Listed(raw)
	}
	return raw, err
}

func (s *Server) toolsCall20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	return s.bridge(ctx, r, p.Name, p.Arguments, func(ctx context.Context, sess *requestSession) ([]byte, error) {
		ctx, raw, err := s.callTool(ctx, toolCall{px: r.ag.px, sess: sess, env: &r.env, cont: sess.cont, own: func(name string) bool { return r.ag.ownTool(name) && offers20260728(r, r.ag.tools[name].Extension) }}, p.Name, p.Arguments, withoutEnvelope(p.Meta))
		if ir, ok, ierr := s.inputRequired(r, p.Name, p.Arguments, err); ok {
			return ir, ierr
		}
		if err != nil || raw != nil {
			return raw, err
		}
		return json.Marshal(runOwnTool(ctx, r.ag.tools[p.Name], p.Arguments, s.callTimeout()))
	})
}

func (s *Server) resourcesList20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	listed(ctx, r.ag.px)
	own := make([]*mcp.Resource, 0, len(r.ag.own.Resources))
	for _, res := range r.ag.own.Resources {
		if offers20260728(r, res.Extension) {
			own = append(own, ownResource(res))
		}
	}
	return listJSON("resources", own, r.ag.px.ListResources())
}

func (s *Server) templatesList20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	listed(ctx, r.ag.px)
	return listJSON("resourceTemplates", []*mcp.ResourceTemplate{}, r.ag.px.ListResourceTemplates())
}

func (s *Server) resourcesRead20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p struct {
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if res, ok := r.ag.resources[p.URI]; ok && offers20260728(r, res.Extension) {
		out, err := readOwnResource(ctx, res, s.callTimeout())
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	if raw, ok := skills.Own().Read(p.URI); ok {
		return raw, nil
	}
	cont, err := s.continuing(r, p.URI, nil)
	if err != nil {
		return nil, err
	}
	ctx, req, err := s.request20260728(ctx, r, withoutEnvelope(p.Meta), agentOf)
	if err != nil {
		return nil, err
	}
	req.Continuation = cont
	raw, err := r.ag.px.ReadResource(ctx, req, p.URI)
	if ir, ok, ierr := s.inputRequired(r, p.URI, nil, err); ok {
		return ir, ierr
	}
	if errors.Is(err, proxy.ErrNotFound) {
		// SEP-2164: not found is invalid params naming the URI.
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	if err != nil {
		return nil, clientError(err)
	}
	return raw, nil
}

func (s *Server) promptsList20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	listed(ctx, r.ag.px)
	own := make([]*mcp.Prompt, len(r.ag.own.Prompts))
	for i, p := range r.ag.own.Prompts {
		own[i] = ownPrompt(p)
	}
	return listJSON("prompts", own, r.ag.px.ListPrompts())
}

func (s *Server) promptsGet20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
		Meta      map[string]any    `json:"_meta"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if pr, ok := r.ag.prompts[p.Name]; ok {
		out, err := getOwnPrompt(ctx, pr, s.callTimeout())
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
	if !r.ag.px.HasPrompt(p.Name) {
		r.ag.px.AwaitStarted(ctx, 0)
	}
	if !r.ag.px.HasPrompt(p.Name) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + quoteName(p.Name)}
	}
	args, _ := json.Marshal(p.Arguments)
	cont, err := s.continuing(r, p.Name, args)
	if err != nil {
		return nil, err
	}
	ctx, req, err := s.request20260728(ctx, r, withoutEnvelope(p.Meta), agentOf)
	if err != nil {
		return nil, err
	}
	req.Continuation = cont
	raw, err := r.ag.px.GetPrompt(ctx, req, p.Name, p.Arguments)
	if ir, ok, ierr := s.inputRequired(r, p.Name, args, err); ok {
		return ir, ierr
	}
	if err != nil {
		return nil, clientError(err)
	}
	return raw, nil
}

func (s *Server) complete20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p mcp.CompleteParams
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	empty := func() ([]byte, error) {
		return json.Marshal(&mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}})
	}
	if p.Ref == nil {
		return empty()
	}
	ref, cctx := completion(&p)
	ctx, req, err := s.request20260728(ctx, r, nil, hostOf)
	if err != nil {
		return nil, err
	}
	raw, ok, err := r.ag.px.Complete(ctx, req, p.Ref.Type, ref, p.Argument, cctx)
	if err != nil {
		return nil, clientError(err)
	}
	if !ok {
		return empty()
	}
	return raw, nil
}

// task20260728 forwards a request of the tasks extension to the upstream
// the task lives on ([proxy.Proxy.Task]).
func (s *Server) task20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	ctx, req, err := s.request20260728(ctx, r, nil, agentOf)
	if err != nil {
		return nil, err
	}
	raw, err := r.ag.px.Task(ctx, req, r.method, r.params)
	if errors.Is(err, proxy.ErrNotFound) {
		return nil, wire.InvalidParams("%v", err)
	}
	if err != nil {
		return nil, clientError(err)
	}
	return raw, nil
}

// listed readies px for a listing: upstreams still starting are waited
// for (bounded), and listings past the ttlMs their 2026-07-28 upstream
// gave are fetched again ([proxy.Proxy.Refresh]).
func listed(ctx context.Context, px *proxy.Proxy) {
	px.AwaitStarted(ctx, 0)
	px.Refresh(ctx)
}

// requestSession is a 2026-07-28 request as the proxy sees a client: it
// lives as long as the request, is told its progress, and cannot be
// asked anything mid-call (the protocol has no server→client requests:
// an input-required result asks instead).
type requestSession struct {
	id  string
	r   *request20260728
	env wire.Envelope
	// call, when not nil, takes the upstream's questions to the client as
	// input requests (rev20260728_parked.go).
	call *parked
	// cont is the answers of the retry this request is, nil for a first
	// call.
	cont *proxy.Continuation
}

var requestSeq atomic.Uint64

func newRequestSession(r *request20260728) *requestSession {
	return &requestSession{id: "r/" + strconv.FormatUint(requestSeq.Add(1), 10), r: r, env: r.env}
}

// ID implements [proxy.Session].
func (rs *requestSession) ID() string { return rs.id }

// Capabilities implements [proxy.Session]: what this request declared.
// Sampling, elicitation and roots are offered to an upstream's questions
// only when the call can be parked for them (rev20260728_parked.go).
func (rs *requestSession) Capabilities() proxy.ClientCapabilities {
	c := proxy.ClientCapabilities{ElicitationURL: rs.env.Caps.ElicitationURL, Extensions: rs.env.Caps.Extensions, Raw: rs.env.Caps.Raw}
	if rs.call != nil {
		c.Sampling, c.Elicitation, c.Roots = rs.env.Caps.Sampling, rs.env.Caps.Elicitation, rs.env.Caps.Roots
	}
	return c
}

// AnswersInputRequired implements [proxy.InputAnswerer]: an upstream's
// input-required result comes back to the request, which answers it
// with its own (rev20260728_inputrequired.go).
func (rs *requestSession) AnswersInputRequired() bool { return true }

// errCannotAsk answers an upstream's server→client request made during a
// 2026-07-28 call.
var errCannotAsk = errors.New("the client speaks MCP 2026-07-28, which takes no server→client requests during a call")

// Request implements [proxy.Session]: a question of a 2025 upstream
// goes to the client as an input request of the call's answer
// (rev20260728_parked.go), if the request declared it takes that kind.
func (rs *requestSession) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if rs.call == nil {
		return nil, errCannotAsk
	}
	if !rs.env.Caps.Allows(method) {
		return nil, &upstream.RPCError{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the client did not declare it takes %s (its request's clientCapabilities)", method)}
	}
	return rs.call.put(ctx, method, params)
}

// Notify implements [proxy.Session]: progress goes on the request's
// answer; log messages only when the request asked for them (its
// logLevel) at or above that level; nothing else belongs to a request.
func (rs *requestSession) Notify(_ context.Context, method string, params json.RawMessage) error {
	switch method {
	case "notifications/progress":
		return rs.r.out.notify(method, params)
	case "notifications/message":
		if rs.env.LogLevel == "" {
			return nil
		}
		var p struct {
			Level string `json:"level"`
		}
		if json.Unmarshal(params, &p) != nil || wire.LogRank(p.Level) < wire.LogRank(rs.env.LogLevel) {
			return nil
		}
		return rs.r.out.notify(method, params)
	}
	return nil
}
