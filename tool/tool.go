package tool

import (
	"context"
	"encoding/json"
)

// Def is one tool as the model sees it, with its handler. The JSON tags
// are MCP's wire names, so a marshalled Def reads like a tools/list entry;
// the handler is not marshalled.
type Def struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema whose "type" is "object".
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations Annotations     `json:"annotations"`
	// Meta is the listing's _meta (an MCP App's ui.resourceUri and
	// ui.visibility); nil lists none.
	Meta map[string]any `json:"_meta,omitempty"`
	// Extension, when set, is the client extension the tool needs
	// (capabilities.extensions): only a client that declared it is
	// offered the tool.
	Extension string  `json:"-"`
	Handler   Handler `json:"-"`
}

// Handler runs one call. args is the call's "arguments" object as the
// client sent it; it may be empty or null when the client sent none.
type Handler func(ctx context.Context, args json.RawMessage) Result

// Annotations are the hints a client may show or act on. nil means "not
// said", which clients read as the MCP defaults (not read-only,
// destructive, not idempotent, open world).
type Annotations struct {
	ReadOnly    *bool `json:"readOnlyHint,omitempty"`
	Destructive *bool `json:"destructiveHint,omitempty"`
	Idempotent  *bool `json:"idempotentHint,omitempty"`
	OpenWorld   *bool `json:"openWorldHint,omitempty"`
}

// ReadOnly is the annotation set of a tool that only reads local state:
// read-only, idempotent, closed world. destructiveHint is not said: MCP
// gives it meaning only when readOnlyHint is false, and every tools/list
// would carry it for nothing (issue 28).
func ReadOnly() Annotations {
	return Annotations{ReadOnly: Bool(true), Idempotent: Bool(true), OpenWorld: Bool(false)}
}

// Bool returns a pointer to b, for [Annotations].
func Bool(b bool) *bool { return &b }

// Result is what a call returns: one text block. IsError marks failures
// the model cannot fix by changing its arguments (a server fault, a
// missing session); mistakes it can fix are ordinary results whose text
// says what to change.
type Result struct {
	Text    string
	IsError bool
	// Charged is how many tokens of Text the handler charged to the
	// caller's context budget itself (an exploration result, an artifact
	// returned inline, checked against the budget before it is given); the
	// server charges the rest of what the model receives.
	Charged int
	// Refused names what refused the call when that is not the
	// arguments' fault ([RefusedBudget]), "" otherwise: what telemetry
	// counts as a refusal.
	Refused string
}

// RefusedBudget is [Result].Refused of a call whose answer would not fit
// what is left of the context budget.
const RefusedBudget = "budget"

// Text is a successful result holding s.
func Text(s string) Result { return Result{Text: s} }

// Error is a failed result (IsError) holding s.
func Error(s string) Result { return Result{Text: s, IsError: true} }
