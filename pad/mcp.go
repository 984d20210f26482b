package pad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Names under which [Register] exposes the pad.
const (
	ToolRead     = "read_scratchpad"
	ToolUpdate   = "update_scratchpad"
	ToolAppend   = "append_scratchpad"
	ResourceURI  = "scratchpad://pad"
	PromptName   = "scratchpad"
	resourceMIME = "text/markdown"
)

// Register adds the pad's tools, the resource [ResourceURI] and the prompt
// [PromptName] to s, with tool schemas for a Markdown pad with the default
// sections. padFor picks the pad of the calling session (its agent or run);
// the model never names one. See [RegisterWithOptions] to match a
// configuration.
func Register(s *server.MCPServer, padFor func(ctx context.Context) (*Pad, error)) {
	_ = RegisterWithOptions(s, padFor, Options{}) // the defaults are valid
}

// RegisterWithOptions is [Register] with tool schemas fitted to opts: the
// section names as an enum, or the {state} form of update_scratchpad for a
// structured pad. The pads padFor returns should use the same options.
//
// Call it before serving. For resources/subscribe to be accepted the server
// must be built with server.WithResourceCapabilities(true, …); Register
// records subscriptions through the server's hooks, installing a Hooks value
// if s has none. After every change made through a tool it sends
// notifications/resources/updated to each session subscribed to that pad;
// while anyone is subscribed, a watcher also polls the subscribed pads
// (every 2s) so hand edits, CLI restores and other processes sharing a
// run's pad are announced too.
// Invalid options are an error wrapping [ErrOptions] and register nothing.
func RegisterWithOptions(s *server.MCPServer, padFor func(ctx context.Context) (*Pad, error), opts Options) error {
	o, err := opts.normalize()
	if err != nil {
		return err
	}
	r := &registration{s: s, padFor: padFor, subs: map[string]string{}, pads: map[string]*Pad{}, stamps: map[string]string{}, every: pollInterval}
	r.hook()

	s.AddTool(readTool(), r.handleRead)
	s.AddTool(updateTool(o), r.handleUpdate)
	s.AddTool(appendTool(), r.handleAppend)
	s.AddResource(mcp.NewResource(ResourceURI, "scratchpad",
		mcp.WithResourceDescription("The working-memory scratchpad of this agent or run, rendered as Markdown. Subscribe to be told when it changes."),
		mcp.WithMIMEType(resourceMIME)), r.handleResource)
	s.AddPrompt(mcp.NewPrompt(PromptName,
		mcp.WithPromptDescription("The current scratchpad, to put in front of the model each turn.")), r.handlePrompt)
	return nil
}

type registration struct {
	s      *server.MCPServer
	padFor func(ctx context.Context) (*Pad, error)

	mu      sync.Mutex
	subs    map[string]string // session id → location of the pad it subscribed to
	pads    map[string]*Pad   // pad location → pad, for the watcher
	stamps  map[string]string // pad location → last seen stamp
	polling bool              // a watcher goroutine is running
	every   time.Duration     // poll interval, fixed at registration

	// stampMu makes taking a stamp and comparing it one step for the
	// watcher and for changed, without holding mu across a Redis round
	// trip; otherwise one could overwrite the other's newer stamp with an
	// older one and announce a change twice.
	stampMu sync.Mutex
}

// pollInterval is how often subscribed pads are checked for changes made
// outside this server's tools: hand edits, the CLI, other processes
// sharing a run's pad. Tests shorten it.
var pollInterval = 2 * time.Second

// stamp summarizes the pad and its ledger; any write changes it (file
// mtimes and sizes, or the version counter and content hash on Redis). ok
// is false when the store cannot be read (Redis down): keep the old stamp
// then rather than announce a change that did not happen.
func stamp(p *Pad) (s string, ok bool) {
	s, err := p.store.stamp()
	return s, err == nil
}

// watch polls subscribed pads until no subscription is left, so changes
// made elsewhere reach subscribers too. Stamps are taken outside the
// mutex: on Redis each is a round trip.
func (r *registration) watch() {
	for {
		time.Sleep(r.every)
		r.stampMu.Lock()
		r.mu.Lock()
		if len(r.subs) == 0 {
			r.polling = false
			r.mu.Unlock()
			r.stampMu.Unlock()
			return
		}
		pads := make(map[string]*Pad, len(r.pads))
		for loc, p := range r.pads {
			pads[loc] = p
		}
		r.mu.Unlock()
		fresh := map[string]string{}
		for loc, p := range pads {
			if st, ok := stamp(p); ok {
				fresh[loc] = st
			}
		}
		var changed []string
		r.mu.Lock()
		for loc, st := range fresh {
			if st != r.stamps[loc] {
				r.stamps[loc] = st
				changed = append(changed, loc)
			}
		}
		r.mu.Unlock()
		r.stampMu.Unlock()
		for _, loc := range changed {
			r.notify(loc)
		}
	}
}

// hook tracks resources/subscribe per session: mcp-go acknowledges the
// request but its built-in sessions keep no subscription state.
func (r *registration) hook() {
	h := r.s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(r.s)
	}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		if req.Params.URI != ResourceURI {
			return
		}
		session := server.ClientSessionFromContext(ctx)
		if session == nil {
			return
		}
		p, err := r.padFor(ctx)
		if err != nil || p == nil {
			return
		}
		loc := p.Location()
		st, _ := stamp(p)
		r.mu.Lock()
		r.subs[session.SessionID()] = loc
		if _, ok := r.pads[loc]; !ok {
			r.pads[loc] = p
			r.stamps[loc] = st
		}
		if !r.polling {
			r.polling = true
			go r.watch()
		}
		r.mu.Unlock()
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if req.Params.URI != ResourceURI {
			return
		}
		if session := server.ClientSessionFromContext(ctx); session != nil {
			r.mu.Lock()
			delete(r.subs, session.SessionID())
			r.mu.Unlock()
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, session server.ClientSession) {
		r.mu.Lock()
		delete(r.subs, session.SessionID())
		r.mu.Unlock()
	})
}

// changed notifies every session subscribed to the pad p after a change
// made through a tool, and records the new stamp so the watcher does not
// announce the same change again.
func (r *registration) changed(p *Pad) {
	loc := p.Location()
	r.stampMu.Lock()
	r.mu.Lock()
	_, watched := r.pads[loc]
	r.mu.Unlock()
	if watched {
		st, ok := stamp(p)
		r.mu.Lock()
		if ok && st == r.stamps[loc] {
			// The watcher saw this change first and announced it.
			r.mu.Unlock()
			r.stampMu.Unlock()
			return
		}
		if ok {
			r.stamps[loc] = st
		}
		r.mu.Unlock()
	}
	r.stampMu.Unlock()
	r.notify(loc)
}

// notify sends notifications/resources/updated to the sessions subscribed
// to the pad at loc.
func (r *registration) notify(loc string) {
	r.mu.Lock()
	var ids []string
	for id, l := range r.subs {
		if l == loc {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	for _, id := range ids {
		err := r.s.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": ResourceURI})
		if errors.Is(err, server.ErrSessionNotFound) {
			r.mu.Lock()
			delete(r.subs, id)
			r.mu.Unlock()
		}
	}
}

func boolPtr(b bool) *bool { return &b }

func readTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(ToolRead,
		"Read your working-memory scratchpad: the section contract (name, cap, purpose), the sections, the findings ledger (newest last) and any warnings. Read it at the start of every turn; it survives context resets.",
		json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"description":"Only show ledger entries carrying one of these tags. Sections are always shown."}},"additionalProperties":false}`))
	t.Annotations.ReadOnlyHint = boolPtr(true)
	t.Annotations.OpenWorldHint = boolPtr(false)
	return t
}

func updateTool(o Options) mcp.Tool {
	var schema any
	desc := ""
	if o.Format == FormatJSON {
		desc = "Deep-merge an update into the scratchpad state: objects merge recursively, arrays and scalars replace, null removes a key. The merged state must satisfy the schema, or nothing changes. Returns the diff."
		schema = map[string]any{
			"type": "object",
			"properties": map[string]any{
				"state": map[string]any{"type": "object", "description": "The keys to change."},
			},
			"required":             []string{"state"},
			"additionalProperties": false,
		}
	} else {
		names := make([]string, len(o.Sections))
		for i, s := range o.Sections {
			names[i] = s.Name
		}
		desc = "Patch scratchpad sections. Ops: append (adds list items, one per line; numbered sections get \"N. [ ] item\"), replace (sets the whole section: the only op that can drop text), check (content = item number to tick in a numbered section), remove (drops lines containing content), clear. All patches are validated first and apply together or not at all. Returns the diff and warnings such as a section over its cap; condense a section when warned."
		schema = map[string]any{
			"type": "object",
			"properties": map[string]any{
				"patches": map[string]any{
					"type": "array",
					"items": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"section": map[string]any{"type": "string", "enum": names},
							"op":      map[string]any{"type": "string", "enum": Ops},
							"content": map[string]any{"type": "string"},
						},
						"required":             []string{"section", "op"},
						"additionalProperties": false,
					},
				},
			},
			"required":             []string{"patches"},
			"additionalProperties": false,
		}
	}
	raw, _ := json.Marshal(schema)
	t := mcp.NewToolWithRawSchema(ToolUpdate, desc, raw)
	t.Annotations.ReadOnlyHint = boolPtr(false)
	t.Annotations.DestructiveHint = boolPtr(true) // replace and clear drop text
	t.Annotations.OpenWorldHint = boolPtr(false)
	return t
}

func appendTool() mcp.Tool {
	t := mcp.NewToolWithRawSchema(ToolAppend,
		"Append one finding to the scratchpad's ledger. Safe when several agents write at once; use it for facts as you learn them, and keep the sections for the summary.",
		json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","description":"The finding, with where it came from."},"tags":{"type":"array","items":{"type":"string"}}},"required":["note"],"additionalProperties":false}`))
	t.Annotations.ReadOnlyHint = boolPtr(false)
	t.Annotations.DestructiveHint = boolPtr(false)
	t.Annotations.OpenWorldHint = boolPtr(false)
	return t
}

// errorResult is a tool error the model can act on: a successful result
// holding one JSON object.
func errorResult(code, message string, extra map[string]any) *mcp.CallToolResult {
	obj := map[string]any{"error": code, "message": message}
	for k, v := range extra {
		obj[k] = v
	}
	data, _ := json.Marshal(obj)
	return mcp.NewToolResultText(string(data))
}

// failure maps a pad error to a tool result. Errors the model cannot act on
// (I/O) are marked isError.
func failure(p *Pad, err error) *mcp.CallToolResult {
	extra := map[string]any{}
	var pe *PatchError
	if errors.As(err, &pe) {
		extra["patch"] = pe.Index + 1
		extra["state_unchanged"] = true
	}
	code := ""
	switch {
	case errors.Is(err, ErrUnknownSection):
		code = "unknown_section"
		if p != nil {
			names := []string{}
			for _, s := range p.opts.Sections {
				names = append(names, s.Name)
			}
			extra["sections"] = names
		}
	case errors.Is(err, ErrUnknownOp):
		code = "unknown_op"
		extra["ops"] = Ops
	case errors.Is(err, ErrBadPatch):
		code = "bad_patch"
	case errors.Is(err, ErrEmptyNote):
		code = "empty_note"
	case errors.Is(err, ErrNoteTooLong):
		code = "note_too_long"
	case errors.Is(err, ErrSchema):
		code = "schema_violation"
		extra["state_unchanged"] = true
	case errors.Is(err, ErrBadState):
		code = "bad_state"
		extra["state_unchanged"] = true
	case errors.Is(err, ErrWrongFormat):
		code = "wrong_format"
	case errors.Is(err, errBadArguments):
		code = "bad_arguments"
	case errors.Is(err, ErrLocked), errors.Is(err, ErrLockLost):
		// Another writer held the pad too long, or this one outlived its
		// lease: nothing was written and the same call may be retried.
		code = "pad_busy"
		extra["state_unchanged"] = true
	default:
		res := errorResult("internal", err.Error(), nil)
		res.IsError = true
		return res
	}
	msg := err.Error()
	if pe != nil {
		msg = pe.Err.Error()
	}
	return errorResult(code, msg, extra)
}

var errBadArguments = errors.New("bad arguments")

func (r *registration) pad(ctx context.Context) (*Pad, *mcp.CallToolResult) {
	p, err := r.padFor(ctx)
	if err != nil || p == nil {
		if err == nil {
			err = errors.New("no scratchpad for this session")
		}
		res := errorResult("no_pad", err.Error(), nil)
		res.IsError = true
		return nil, res
	}
	return p, nil
}

func (r *registration) handleRead(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Tags []string `json:"tags"`
	}
	if err := req.BindArguments(&args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err)), nil
	}
	p, fail := r.pad(ctx)
	if fail != nil {
		return fail, nil
	}
	text, err := p.Read(args.Tags)
	if err != nil {
		return failure(p, err), nil
	}
	return mcp.NewToolResultText(text), nil
}

func (r *registration) handleUpdate(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Patches *[]Patch        `json:"patches"`
		State   json.RawMessage `json:"state"`
	}
	if err := req.BindArguments(&args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err)), nil
	}
	p, fail := r.pad(ctx)
	if fail != nil {
		return fail, nil
	}
	var res *Result
	var err error
	switch {
	case p.opts.Format == FormatJSON && len(args.State) > 0:
		res, err = p.Merge(args.State)
	case p.opts.Format == FormatJSON:
		err = fmt.Errorf("%w: this pad is structured; send {\"state\": {...}} with the keys to change", ErrWrongFormat)
	case args.Patches != nil:
		res, err = p.Update(*args.Patches)
	case len(args.State) > 0:
		err = fmt.Errorf("%w: this pad has sections; send {\"patches\": [{section, op, content}]}", ErrWrongFormat)
	default:
		err = fmt.Errorf("%w: patches is required (an empty list is a valid no-op)", errBadArguments)
	}
	if err != nil {
		return failure(p, err), nil
	}
	if res.Changed {
		r.changed(p)
	}
	return mcp.NewToolResultText(formatResult(res)), nil
}

// formatResult is the text update_scratchpad returns: a status line, the
// diff, then warnings, which the model must see.
func formatResult(res *Result) string {
	var b strings.Builder
	if res.Changed {
		b.WriteString("updated\n\n```diff\n")
		b.WriteString(res.Diff)
		b.WriteString("```\n")
	} else {
		b.WriteString("no change\n")
	}
	if len(res.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, w := range res.Warnings {
			b.WriteString("- ")
			b.WriteString(w)
			b.WriteString("\n")
		}
	}
	return b.String()
}

func (r *registration) handleAppend(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Note string   `json:"note"`
		Tags []string `json:"tags"`
	}
	if err := req.BindArguments(&args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err)), nil
	}
	p, fail := r.pad(ctx)
	if fail != nil {
		return fail, nil
	}
	e, err := p.AppendBy(AuthorFrom(ctx), args.Note, args.Tags)
	if err != nil {
		return failure(p, err), nil
	}
	r.changed(p)
	return mcp.NewToolResultText("appended to the ledger at " + entryTime(e.Time)), nil
}

func (r *registration) render(ctx context.Context) (string, error) {
	p, err := r.padFor(ctx)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", errors.New("pad: no scratchpad for this session")
	}
	v, err := p.View(nil)
	if err != nil {
		return "", err
	}
	return p.Render(v, RenderMarkdown), nil
}

func (r *registration) handleResource(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	text, err := r.render(ctx)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: ResourceURI, MIMEType: resourceMIME, Text: text}}, nil
}

func (r *registration) handlePrompt(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	text, err := r.render(ctx)
	if err != nil {
		return nil, err
	}
	return mcp.NewGetPromptResult("The current scratchpad",
		[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
}

type authorKey struct{}

// WithAuthor returns ctx naming the agent behind a request; the server
// sets it from the session's identity, and append_scratchpad records it
// on the ledger entry.
func WithAuthor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, authorKey{}, name)
}

// AuthorFrom returns the name [WithAuthor] stored in ctx, or "".
func AuthorFrom(ctx context.Context) string {
	s, _ := ctx.Value(authorKey{}).(string)
	return s
}
