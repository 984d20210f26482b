package pad

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	defs := []tool.Def{
		{Name: ToolRead,
			Description: "Read your working-memory scratchpad: sections (with cap and purpose), keys, findings ledger (newest last), warnings. Read it at the start of every turn; it survives context resets.",
			InputSchema: tool.MustJSON(map[string]any{"type": "object", "properties": map[string]any{
				"tags":       tagsProp("Only ledger entries and keys with one of these tags."),
				"keys":       map[string]any{"type": "array", "items": map[string]any{"type": "string", "maxLength": maxKeyArg}, "maxItems": maxKeys, "description": `Only these keys ("ns:" = a namespace), nothing else.`},
				"format":     map[string]any{"type": "string", "enum": RenderModes},
				"max_tokens": map[string]any{"type": "integer", "minimum": 1, "maximum": maxReadTokens},
			}}),
			Annotations: tool.Annotations{ReadOnly: tool.Bool(true), OpenWorld: tool.Bool(false)},
			Handler:     h.read},
		{Name: ToolUpdate,
			Description: updateDescription(o),
			InputSchema: updateSchema(o),
			Annotations: tool.Annotations{
				ReadOnly:    tool.Bool(false),
				Destructive: tool.Bool(true), // replace and clear drop text
				OpenWorld:   tool.Bool(false),
			},
			Handler: h.update},
		{Name: ToolAppend,
			Description: "Append one finding to the scratchpad's ledger, safe with concurrent writers: facts as you learn them; the sections are for the summary.",
			InputSchema: tool.MustJSON(map[string]any{"type": "object", "properties": map[string]any{
				"note": map[string]any{"type": "string", "maxLength": maxNoteChars, "description": "The finding, with where it came from."},
				"tags": tagsProp(""),
			}, "required": []string{"note"}}),
			Annotations: tool.Annotations{ReadOnly: tool.Bool(false), Destructive: tool.Bool(false), OpenWorld: tool.Bool(false)},
			Handler:     h.append},
	}
	if o.ReadOnly {
		// Only read_scratchpad: the pad is the model's to read, not to
		// change ([pad] read_only).
		defs = defs[:1]
	}
	for i := range defs {
		// The schema declares each argument's type and whether it is
		// required; the handlers decode what it vouched for.
		defs[i].Handler = tool.Checked(defs[i].InputSchema, badArguments, defs[i].Handler)
	}
	return defs, nil
}

// badArguments is the answer to arguments the tool's schema refuses.
func badArguments(problems []string) tool.Result {
	return failure(nil, fmt.Errorf("%w: %s", errBadArguments, strings.Join(problems, "; ")))
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

// The bounds of the pad tools' arguments, in their schemas: the checker
// (tool.Checked) enforces them on the top-level arguments and on array
// items; what lies inside a patch (key, ttl, tags) is checked where the
// patch is validated, against the same constants. Section content and
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

// tagsProp is a list of tags: at most maxKeyTags of at most maxTagChars.
func tagsProp(desc string) map[string]any {
	p := map[string]any{"type": "array", "items": map[string]any{"type": "string", "maxLength": maxTagChars}, "maxItems": maxKeyTags}
	if desc != "" {
		p["description"] = desc
	}
	return p
}

// keyPatchProps are the properties a patch item has for key operations.
func keyPatchProps(props map[string]any) map[string]any {
	props["key"] = map[string]any{"type": "string", "maxLength": maxKeyName}
	props["value"] = map[string]any{}
	props["ttl"] = map[string]any{"type": "number", "minimum": 0, "maximum": maxTTLSeconds}
	props["sliding"] = map[string]any{"type": "boolean"}
	props["tags"] = tagsProp("")
	return props
}

// clearProp is update_scratchpad's clear argument.
var clearProp = map[string]any{"type": "boolean", "description": "true, alone, when the task is done: empty the sections (or state), keys and ledger (kept in history)."}

func updateSchema(o Options) json.RawMessage {
	if o.Format == FormatJSON {
		return tool.MustJSON(map[string]any{
			"type": "object",
			"properties": map[string]any{
				"state":   map[string]any{"type": "object", "description": "The keys to change (or send them directly)."},
				"content": contentProp,
				"clear":   clearProp,
				"patches": map[string]any{
					"type": "array",
					"items": map[string]any{
						"type": "object",
						"properties": keyPatchProps(map[string]any{
							"op":      map[string]any{"type": "string", "enum": KeyOps},
							"content": map[string]any{"type": "string"},
						}),
						"required": []string{"op"},
					},
				},
			},
			"additionalProperties": true,
		})
	}
	names := make([]string, len(o.Sections))
	for i, s := range o.Sections {
		names[i] = s.Name
	}
	return tool.MustJSON(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"patches": map[string]any{
				"type": "array",
				"items": map[string]any{
					"type": "object",
					"properties": keyPatchProps(map[string]any{
						"section": map[string]any{"type": "string", "enum": names},
						"op":      map[string]any{"type": "string", "enum": append(slices.Clone(Ops), KeyOps...)},
						"content": map[string]any{"type": "string"},
					}),
					"required": []string{"op"},
				},
			},
			"clear":   clearProp,
			"content": contentProp,
		},
	})
}

// contentProp is update_scratchpad's whole-body replacement.
var contentProp = map[string]any{"type": "string", "description": "Instead of patches: the whole new pad file text, validated first."}

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

// bind decodes a call's arguments into v; no arguments leave v zero.
func bind(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
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

func (h *handlers) read(ctx context.Context, raw json.RawMessage) tool.Result {
	var args struct {
		Tags      []string `json:"tags"`
		Keys      []string `json:"keys"`
		Format    string   `json:"format"`
		MaxTokens int      `json:"max_tokens"`
	}
	if err := bind(raw, &args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err))
	}
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

func (h *handlers) update(ctx context.Context, raw json.RawMessage) tool.Result {
	var args struct {
		Patches *[]json.RawMessage `json:"patches"`
		State   json.RawMessage    `json:"state"`
		Content *string            `json:"content"`
		Clear   bool               `json:"clear"`
	}
	if err := bind(raw, &args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err))
	}
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
		var err error
		if patches, ops, where, err = splitPatches(*args.Patches); err != nil {
			return failure(p, err)
		}
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

func (h *handlers) append(ctx context.Context, raw json.RawMessage) tool.Result {
	var args struct {
		Note string   `json:"note"`
		Tags []string `json:"tags"`
	}
	if err := bind(raw, &args); err != nil {
		return failure(nil, fmt.Errorf("%w: %v", errBadArguments, err))
	}
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
func splitPatches(raw []json.RawMessage) ([]Patch, []KeyOp, []int, error) {
	var patches []Patch
	var ops []KeyOp
	var pw, ow []int
	for i, item := range raw {
		var head struct {
			Op string `json:"op"`
		}
		if err := json.Unmarshal(item, &head); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: patch %d: %v", errBadArguments, i+1, err)
		}
		if IsKeyOp(head.Op) {
			var op KeyOp
			if err := json.Unmarshal(item, &op); err != nil {
				return nil, nil, nil, fmt.Errorf("%w: patch %d: %v", errBadArguments, i+1, err)
			}
			ops = append(ops, op)
			ow = append(ow, i)
			continue
		}
		var pt Patch
		if err := json.Unmarshal(item, &pt); err != nil {
			return nil, nil, nil, fmt.Errorf("%w: patch %d: %v", errBadArguments, i+1, err)
		}
		patches = append(patches, pt)
		pw = append(pw, i)
	}
	return patches, ops, append(pw, ow...), nil
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
