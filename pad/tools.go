package pad

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Names under which the pad is offered to models.
const (
	ToolRead     = "read_scratchpad"
	ToolUpdate   = "update_scratchpad"
	ToolAppend   = "append_scratchpad"
	ResourceURI  = "scratchpad://pad"
	PromptName   = "scratchpad"
	resourceMIME = "text/markdown"
)

// PadFunc picks the pad of the calling session (its agent or run); the
// model never names one.
type PadFunc func(ctx context.Context) (*Pad, error)

// Tools returns read_scratchpad, update_scratchpad and append_scratchpad,
// with schemas fitted to opts: the section names as an enum, or the
// {state} form of update_scratchpad for a structured pad. The pads padFor
// returns should use the same options. After every change made through
// them the tools call w.Changed, so subscribers hear of it; w may be nil.
// Invalid options are an error wrapping [ErrOptions].
func Tools(padFor PadFunc, opts Options, w *Watcher) ([]tool.Def, error) {
	o, err := opts.normalize()
	if err != nil {
		return nil, err
	}
	h := &handlers{padFor: padFor, w: w}
	d, err := declare(o)
	if err != nil {
		return nil, err
	}
	fail := d.badArguments
	defs := []tool.Def{
		{Name: ToolRead,
			Description: "Read your working-memory scratchpad: sections (with cap and purpose), keys, findings ledger (newest last), warnings. Read it at the start of every turn; it survives context resets.",
			InputSchema: d.read.Schema(),
			Annotations: tool.Annotations{ReadOnly: tool.Bool(true), OpenWorld: tool.Bool(false)},
			Handler:     tool.Handle(d.read, fail, h.read)},
		{Name: ToolUpdate,
			Description: updateDescription(o),
			InputSchema: d.updateSchema(),
			Annotations: tool.Annotations{
				ReadOnly:    tool.Bool(false),
				Destructive: tool.Bool(true), // replace and clear drop text
				OpenWorld:   tool.Bool(false),
			},
			Handler: d.updateHandler(fail, h.update)},
		{Name: ToolAppend,
			Description: "Append one finding to the scratchpad's ledger, safe with concurrent writers: facts as you learn them; the sections are for the summary.",
			InputSchema: d.append.Schema(),
			Annotations: tool.Annotations{ReadOnly: tool.Bool(false), Destructive: tool.Bool(false), OpenWorld: tool.Bool(false)},
			Handler:     tool.Handle(d.append, fail, h.append)},
	}
	if o.ReadOnly {
		// Only read_scratchpad: the pad is the model's to read, not to
		// change ([pad] read_only).
		defs = defs[:1]
	}
	return defs, nil
}

// keysHelp is the part of update_scratchpad's description about keys and
// snapshots, the same for both pad formats.
const keysHelp = ` Keys: set (key, value: any JSON; ttl seconds, sliding renews on read, tags; "ns:key" namespaces), delete (key). snapshot/restore (content: a name) save and bring back the whole pad, alone in their call.`

func updateDescription(o Options) string {
	if o.Format == FormatJSON {
		return "Deep-merge an update into the scratchpad state: objects merge, arrays and scalars replace, null removes a key; the result must satisfy the schema or nothing changes. Returns the diff." + keysHelp
	}
	return `Patch scratchpad sections, all or none. Ops: append (content: items, one per line; numbered sections get "N. [ ] item"), replace (the whole section; the only op that drops text), check (content: item number to tick), remove (lines containing content), clear. Returns the diff and warnings; condense a section over its cap.` + keysHelp
}

// The bounds of the pad tools' arguments, in their schemas: the validator
// (tool.Args) enforces them on the arguments, on array items and inside
// each patch; the pad's own check of a patch (for the CLI and the pad's
// Go callers) holds it to the same constants. Section content and
// whole-pad content have none: a section's cap is a warning to condense,
// not a refusal, and the transport bounds a call's size.
const (
	// maxTagChars bounds a tag (of a key or a finding): a word or two.
	maxTagChars = 64
	// maxKeyArg bounds a key read_scratchpad names: a key name, or a
	// namespace ("ns:") or prefix ("ns*") of one.
	maxKeyArg = maxKeyName + 2
	// maxReadTokens bounds read_scratchpad's max_tokens: past any pad's
	// rendering (the configured bound is a ceiling anyway).
	maxReadTokens = 1_000_000
)

// The tools' arguments, each declared once: the structs are what the
// handlers read and what the listed schemas are generated from
// ([tool.Args]); $names are the bounds above and the values of the pad's
// options.
type (
	readArgs struct {
		Tags      []string `json:"tags,omitempty" jsonschema:"Only ledger entries and keys with one of these tags." arg:"maxItems=$maxKeyTags,items.maxLength=$maxTagChars"`
		Keys      []string `json:"keys,omitempty" jsonschema:"Only these keys (\"ns:\" = a namespace), nothing else." arg:"maxItems=$maxKeys,items.maxLength=$maxKeyArg"`
		Format    string   `json:"format,omitempty" arg:"enum=$renderModes"`
		MaxTokens int      `json:"max_tokens,omitempty" arg:"minimum=1,maximum=$maxReadTokens"`
	}
	appendArgs struct {
		Note string   `json:"note" jsonschema:"The finding, with where it came from." arg:"maxLength=$maxNoteChars"`
		Tags []string `json:"tags,omitempty" arg:"maxItems=$maxKeyTags,items.maxLength=$maxTagChars"`
	}

	// wholeArgs are update_scratchpad's forms without patches, the same
	// for both pad formats.
	wholeArgs struct {
		Clear   bool    `json:"clear,omitempty" jsonschema:"true, alone, when the task is done: empty the sections (or state), keys and ledger (kept in history)."`
		Content *string `json:"content,omitempty" jsonschema:"Instead of patches: the whole new pad file text, validated first."`
	}
	// keyPatch is a patch of a structured pad: a key operation (content
	// is a snapshot's name). A number given for content is taken as its
	// text: models send {"op": "check", "content": 2}.
	keyPatch struct {
		Op      string          `json:"op" arg:"enum=$ops"`
		Content string          `json:"content,omitempty" arg:"lenient"`
		Key     string          `json:"key,omitempty" arg:"maxLength=$maxKeyName"`
		Value   json.RawMessage `json:"value,omitempty"`
		TTL     *float64        `json:"ttl,omitempty" arg:"minimum=0,maximum=$maxTTLSeconds"`
		Sliding bool            `json:"sliding,omitempty"`
		Tags    []string        `json:"tags,omitempty" arg:"maxItems=$maxKeyTags,items.maxLength=$maxTagChars"`
	}
	// sectionPatch is a patch of a pad with sections: a section's or a
	// key's.
	sectionPatch struct {
		Section string `json:"section,omitempty" arg:"enum=$sections"`
		keyPatch
	}
	updateArgs struct {
		Patches *[]sectionPatch `json:"patches,omitempty"`
		wholeArgs
	}
	// updateStateArgs is update_scratchpad of a structured pad, whose
	// undeclared arguments are the state's keys sent directly.
	updateStateArgs struct {
		State   json.RawMessage `json:"state,omitempty" jsonschema:"The keys to change (or send them directly)." arg:"type=object"`
		Patches *[]keyPatch     `json:"patches,omitempty"`
		wholeArgs
	}
)

// decls are the pad tools' declarations for one set of options.
type decls struct {
	o       Options
	read    *tool.Args[readArgs]
	append  *tool.Args[appendArgs]
	update  *tool.Args[updateArgs]      // a pad with sections
	stateUp *tool.Args[updateStateArgs] // a structured pad
}

func declare(o Options) (*decls, error) {
	names := make([]string, len(o.Sections))
	for i, s := range o.Sections {
		names[i] = s.Name
	}
	vars := map[string]any{"maxKeyTags": maxKeyTags, "maxTagChars": maxTagChars, "maxKeys": maxKeys, "maxKeyArg": maxKeyArg,
		"renderModes": RenderModes, "maxReadTokens": maxReadTokens, "maxNoteChars": maxNoteChars, "maxKeyName": maxKeyName,
		"maxTTLSeconds": maxTTLSeconds, "sections": names, "ops": allOps()}
	d := &decls{o: o}
	var err error
	if d.read, err = tool.NewArgs[readArgs](tool.ArgsOptions{Vars: vars}); err != nil {
		return nil, err
	}
	if d.append, err = tool.NewArgs[appendArgs](tool.ArgsOptions{Vars: vars}); err != nil {
		return nil, err
	}
	if o.Format == FormatJSON {
		vars["ops"] = KeyOps
		d.stateUp, err = tool.NewArgs[updateStateArgs](tool.ArgsOptions{Vars: vars, Open: true})
	} else {
		d.update, err = tool.NewArgs[updateArgs](tool.ArgsOptions{Vars: vars})
	}
	return d, err
}

func (d *decls) updateSchema() json.RawMessage {
	if d.stateUp != nil {
		return d.stateUp.Schema()
	}
	return d.update.Schema()
}

// updateHandler decodes either format's arguments into the one form
// update reads.
func (d *decls) updateHandler(fail func([]tool.Problem) tool.Result, update func(context.Context, updateCall, json.RawMessage) tool.Result) tool.Handler {
	if d.stateUp == nil {
		return tool.Handle(d.update, fail, func(ctx context.Context, a updateArgs, raw json.RawMessage) tool.Result {
			return update(ctx, updateCall{Patches: a.Patches, wholeArgs: a.wholeArgs}, raw)
		})
	}
	return tool.Handle(d.stateUp, fail, func(ctx context.Context, a updateStateArgs, raw json.RawMessage) tool.Result {
		c := updateCall{State: a.State, wholeArgs: a.wholeArgs}
		if a.Patches != nil {
			ps := make([]sectionPatch, len(*a.Patches))
			for i, k := range *a.Patches {
				ps[i].keyPatch = k
			}
			c.Patches = &ps
		}
		return update(ctx, c, raw)
	})
}

// updateCall is update_scratchpad's arguments, of either pad format.
type updateCall struct {
	Patches *[]sectionPatch
	State   json.RawMessage
	wholeArgs
}

// badArguments is the answer to arguments a tool's schema refuses. A
// problem inside one patch is answered as the pad's check of that patch
// answers: its code (unknown_section, unknown_op, bad_patch; on a
// structured pad any op but a key op is wrong_format), the patch's place
// in the call, nothing changed.
func (d *decls) badArguments(problems []tool.Problem) tool.Result {
	first, in := -1, true
	for _, p := range problems {
		i, ok := patchIndex(p)
		if !ok || p.Keyword == "type" {
			// Outside a patch, or a value of the wrong type inside one
			// (it did not decode: that was always invalid_arguments).
			in = false
			break
		}
		if first < 0 || i < first {
			first = i
		}
	}
	if !in || len(problems) == 0 {
		return failure(nil, fmt.Errorf("%w: %s", errBadArguments, strings.Join(tool.Messages(problems), "; ")))
	}
	var msgs []string
	var err error
	for _, p := range problems {
		if i, _ := patchIndex(p); i != first {
			continue
		}
		// The answer's "patch" says which: the message need not.
		msgs = append(msgs, strings.TrimPrefix(p.Message, "patches item "+p.Path[1]+" "))
		field := p.Path[2]
		v, _ := p.Value.(string)
		switch {
		case err != nil:
		case field == "op" && d.stateUp != nil && (p.Keyword == "enum" || p.Keyword == "required"):
			// Not a key op: a section patch, as the pad has always
			// read it.
			return failure(nil, fmt.Errorf("%w: this pad is structured; section patches do not apply, send {\"state\": {...}} with the keys to change", ErrWrongFormat))
		case field == "section" && p.Keyword == "enum":
			err = fmt.Errorf("%w %s (sections: %s)", ErrUnknownSection, quoteArg(v), sectionNames(d.o.Sections))
		case field == "op" && (p.Keyword == "enum" || p.Keyword == "required"):
			err = fmt.Errorf("%w %s (ops: %s)", ErrUnknownOp, quoteArg(v), strings.Join(allOps(), ", "))
		}
	}
	if err == nil {
		err = fmt.Errorf("%w: %s", ErrBadPatch, strings.Join(msgs, "; "))
	}
	return failureWith(d.o.Sections, nil, &PatchError{Index: first, Err: err})
}

// patchIndex is the index of the patch a problem lies inside.
func patchIndex(p tool.Problem) (int, bool) {
	if len(p.Path) < 3 || p.Path[0] != "patches" {
		return 0, false
	}
	i, err := strconv.Atoi(p.Path[1])
	return i, err == nil
}

// errorResult is a tool error the model can act on: a successful result
// holding one JSON object.
func errorResult(code, message string, extra map[string]any) tool.Result {
	obj := map[string]any{"error": code, "message": message}
	for k, v := range extra {
		obj[k] = v
	}
	data, _ := json.Marshal(obj)
	return tool.Text(string(data))
}

// failure maps a pad error to a tool result. Errors the model cannot act on
// (I/O) are marked isError.
func failure(p *Pad, err error) tool.Result {
	var sections []Section
	if p != nil {
		sections = p.opts.Sections
	}
	return failureWith(sections, p, err)
}

// failureWith is failure where the pad's sections are known without the
// pad.
func failureWith(sections []Section, p *Pad, err error) tool.Result {
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
		if sections != nil {
			names := []string{}
			for _, s := range sections {
				names = append(names, s.Name)
			}
			extra["sections"] = names
		}
	case errors.Is(err, ErrUnknownOp):
		code = "unknown_op"
		extra["ops"] = allOps()
	case errors.Is(err, ErrNoSnapshot):
		code = "no_snapshot"
		extra["state_unchanged"] = true
		if p != nil {
			if names, err := p.Snapshots(); err == nil {
				extra["snapshots"] = names
			}
		}
	case errors.Is(err, ErrBadPatch):
		code = "bad_patch"
	case errors.Is(err, ErrEmptyNote):
		code = "empty_note"
	case errors.Is(err, ErrNoteTooLong):
		code = "note_too_long"
	case errors.Is(err, ErrBadTags):
		code = codeInvalidArguments
	case errors.Is(err, ErrSchema):
		code = "schema_violation"
		extra["state_unchanged"] = true
	case errors.Is(err, ErrBadState):
		code = "bad_state"
		extra["state_unchanged"] = true
	case errors.Is(err, ErrWrongFormat):
		code = "wrong_format"
	case errors.Is(err, errBadArguments):
		code = codeInvalidArguments
	case errors.Is(err, ErrOutcomeUnknown):
		code = "outcome_unknown"
	case errors.Is(err, memdir.ErrOutside):
		// A symbolic link planted in memory_dir leads out of it: nothing
		// was written there, and retrying will not help until it is gone.
		code = codeOutside
	case errors.Is(err, ErrLocked), errors.Is(err, ErrLockLost):
		// Another writer held the pad too long, or this one outlived its
		// lease: nothing was written and the same call may be retried.
		code = "pad_busy"
		extra["state_unchanged"] = true
	default:
		res := errorResult("internal_error", err.Error(), nil)
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

// codeInvalidArguments is the code of arguments that do not fit a tool's
// schema: the same code the exploration and artifact tools answer, so an
// agent branches on one name whichever tool it called.
const codeInvalidArguments = "invalid_arguments"

// codeOutside is the error code of a pad reached through a link planted
// in memory_dir that leads out of it ([memdir.ErrOutside]).
const codeOutside = "outside_memory_dir"

// echoBytes bounds how much of a value the model sent an error repeats:
// a key, op or snapshot name is short when it is right, and may be
// megabytes when it is not.
const echoBytes = 80

// quoteArg is s quoted as an error repeats it, cut to echoBytes.
func quoteArg(s string) string { return strconv.Quote(tool.Clip(s, echoBytes)) }

// handlers are the pad tools' handlers.
type handlers struct {
	padFor PadFunc
	w      *Watcher
}

func (h *handlers) pad(ctx context.Context) (*Pad, *tool.Result) {
	p, err := h.padFor(ctx)
	if err != nil || p == nil {
		if err == nil {
			err = errors.New("no scratchpad for this session")
		}
		code := "no_pad"
		if errors.Is(err, memdir.ErrOutside) {
			code = codeOutside
		}
		res := errorResult(code, err.Error(), nil)
		res.IsError = true
		return nil, &res
	}
	return p, nil
}

func (h *handlers) read(ctx context.Context, args readArgs, _ json.RawMessage) tool.Result {
	p, fail := h.pad(ctx)
	if fail != nil {
		return *fail
	}
	text, err := p.ReadWith(ReadOptions{Tags: args.Tags, Keys: args.Keys, Format: args.Format, MaxTokens: args.MaxTokens, Renew: true})
	if err != nil {
		return failure(p, err)
	}
	return tool.Text(text)
}

func (h *handlers) update(ctx context.Context, args updateCall, raw json.RawMessage) tool.Result {
	p, fail := h.pad(ctx)
	if fail != nil {
		return *fail
	}
	if args.Clear {
		// Before anything else: a structured pad would take "clear" for a
		// key of its state.
		if args.Content != nil || len(args.State) > 0 || (args.Patches != nil && len(*args.Patches) > 0) {
			return failure(p, fmt.Errorf("%w: clear empties the whole scratchpad; send it alone", errBadArguments))
		}
		res, err := p.Clear(AuthorFrom(ctx))
		if err != nil {
			return failure(p, err)
		}
		if res.Changed {
			h.w.Changed(p)
		}
		return tool.Text(formatResult(res))
	}
	if args.Content != nil || (p.opts.Format == FormatJSON && args.Patches == nil && len(args.State) == 0) {
		return h.updateWhole(p, raw, args.Content, args.Patches != nil || len(args.State) > 0)
	}
	var patches []Patch
	var ops []KeyOp
	var where []int // position in the call of patches, then of ops
	if args.Patches != nil {
		patches, ops, where = splitPatches(*args.Patches)
	}
	var res *Result
	var err error
	switch {
	case p.opts.Format == FormatJSON && len(args.State) > 0 && len(ops) > 0:
		err = fmt.Errorf("%w: send state or key patches, not both in one call", errBadArguments)
	case p.opts.Format == FormatJSON && len(args.State) > 0:
		res, err = p.Merge(args.State)
	case p.opts.Format == FormatJSON && len(patches) > 0:
		err = fmt.Errorf("%w: this pad is structured; section patches do not apply, send {\"state\": {...}} with the keys to change", ErrWrongFormat)
	case p.opts.Format == FormatJSON && len(ops) > 0:
		res, err = p.Apply(AuthorFrom(ctx), nil, ops)
	case p.opts.Format == FormatJSON:
		err = fmt.Errorf("%w: this pad is structured; send {\"state\": {...}} with the keys to change", ErrWrongFormat)
	case args.Patches != nil:
		res, err = p.ApplyOnce(AuthorFrom(ctx), retryKey(AuthorFrom(ctx), raw), patches, ops)
		var pe *PatchError
		if errors.As(err, &pe) && pe.Index < len(where) {
			pe.Index = where[pe.Index]
		}
	case len(args.State) > 0:
		err = fmt.Errorf("%w: this pad has sections; send {\"patches\": [{section, op, content}]}", ErrWrongFormat)
	default:
		err = fmt.Errorf("%w: patches is required (an empty list is a valid no-op)", errBadArguments)
	}
	if errors.Is(err, ErrAlreadyApplied) {
		return tool.Text("already applied: " + err.Error())
	}
	if err != nil {
		return failure(p, err)
	}
	if res.Changed {
		h.w.Changed(p)
	}
	return tool.Text(formatResult(res))
}

// retryKey names one update call, its author's and its arguments', so
// that its retry after an answer that was lost is recognised; "" without
// an author (nothing tells two agents apart then).
func retryKey(by string, raw json.RawMessage) string {
	if by == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(by))
	h.Write([]byte{0})
	h.Write(raw)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// formatResult is the text update_scratchpad returns: a status line, the
// diff, then warnings, which the model must see.
func formatResult(res *Result) string {
	var b strings.Builder
	switch {
	case res.Changed && res.Diff != "":
		b.WriteString("updated\n\n```diff\n")
		b.WriteString(res.Diff)
		b.WriteString("```\n")
	case res.Changed:
		b.WriteString("updated\n")
	case len(res.Info) == 0:
		b.WriteString("no change\n")
	}
	for _, line := range res.Info {
		b.WriteString(line)
		b.WriteString("\n")
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

func (h *handlers) append(ctx context.Context, args appendArgs, _ json.RawMessage) tool.Result {
	p, fail := h.pad(ctx)
	if fail != nil {
		return *fail
	}
	e, err := p.AppendBy(AuthorFrom(ctx), args.Note, args.Tags)
	if errors.Is(err, ErrAlreadyAppended) {
		return tool.Text("already in the ledger: " + err.Error())
	}
	if err != nil {
		return failure(p, err)
	}
	h.w.Changed(p)
	return tool.Text("appended to the ledger at " + entryTime(e.Time))
}

// splitPatches sorts a call's patch list into section patches and key
// operations; where maps their positions (patches first, then ops) back
// to the call's, for errors.
func splitPatches(items []sectionPatch) ([]Patch, []KeyOp, []int) {
	var patches []Patch
	var ops []KeyOp
	var pw, ow []int
	for i, it := range items {
		if IsKeyOp(it.Op) {
			k := it.keyPatch
			ops = append(ops, KeyOp{Op: k.Op, Key: k.Key, Value: k.Value, TTL: k.TTL, Sliding: k.Sliding, Tags: k.Tags, Content: k.Content})
			ow = append(ow, i)
			continue
		}
		patches = append(patches, Patch{Section: it.Section, Op: it.Op, Content: it.Content})
		pw = append(pw, i)
	}
	return patches, ops, append(pw, ow...)
}

// updateWhole handles update_scratchpad's forms without patches: content,
// a whole new body checked like a hand edit; and, on a structured pad, the
// state's keys sent directly ({"currentGoal": "Ship v2"}), deep-merged as
// {state: {...}} would be.
func (h *handlers) updateWhole(p *Pad, raw json.RawMessage, content *string, others bool) tool.Result {
	var res *Result
	var err error
	switch {
	case content != nil && others:
		err = fmt.Errorf("%w: send content alone: it replaces the whole pad", errBadArguments)
	case content != nil:
		res, err = p.Save([]byte(*content))
		if errors.Is(err, ErrMalformed) {
			return errorResult("bad_content", err.Error(), map[string]any{"state_unchanged": true})
		}
	case len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("{}")):
		err = fmt.Errorf("%w: this pad is structured; send the keys to change, {\"state\": {...}}, or key patches", ErrWrongFormat)
	default:
		res, err = p.Merge(raw)
	}
	if err != nil {
		return failure(p, err)
	}
	if res.Changed {
		h.w.Changed(p)
	}
	return tool.Text(formatResult(res))
}
