package wire

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The params of the client's methods, as both eras send them: what a
// handler decodes ([Unmarshal]) and what [CheckMessage] holds every
// message's keys to. A member a revision added and a handler does not
// read is still declared, so that its case variants are refused too.

// Meta is a request's params._meta: every member by its exact name. The
// envelope's keys in it (and progressToken) are declared: their case
// variants are refused.
type Meta map[string]json.RawMessage

// ClientCapabilities and Implementation are raw JSON whose keys are
// declared (their shapes are in strict.go); handlers read them with
// [ParseEnvelope].
type (
	ClientCapabilities struct{ json.RawMessage }
	Implementation     struct{ json.RawMessage }
)

// Retrying holds what a retry after an input-required result adds
// (2026-07-28; [ParseRetry] reads it).
type Retrying struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   json.RawMessage            `json:"requestState,omitempty"`
}

// CallToolParams are tools/call's.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      Meta            `json:"_meta,omitempty"`
	Task      json.RawMessage `json:"task,omitempty"`
	Retrying
}

// ReadResourceParams are resources/read's.
type ReadResourceParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
	Retrying
}

// GetPromptParams are prompts/get's.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      Meta              `json:"_meta,omitempty"`
	Retrying
}

// ListParams are a listing's (tools, resources, templates, prompts,
// tasks).
type ListParams struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// CompleteParams are completion/complete's.
type CompleteParams struct {
	Ref struct {
		Type string `json:"type"`
		URI  string `json:"uri,omitempty"`
		Name string `json:"name,omitempty"`
	} `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context *struct {
		Arguments map[string]string `json:"arguments,omitempty"`
	} `json:"context,omitempty"`
	Meta Meta `json:"_meta,omitempty"`
}

// ListenParams are subscriptions/listen's.
type ListenParams struct {
	Notifications *struct {
		Tools     bool     `json:"toolsListChanged,omitempty"`
		Prompts   bool     `json:"promptsListChanged,omitempty"`
		Resources bool     `json:"resourcesListChanged,omitempty"`
		URIs      []string `json:"resourceSubscriptions,omitempty"`
	} `json:"notifications"`
	Meta Meta `json:"_meta,omitempty"`
}

// TaskParams are the tasks methods'.
type TaskParams struct {
	TaskID string          `json:"taskId"`
	Meta   Meta            `json:"_meta,omitempty"`
	Status json.RawMessage `json:"status,omitempty"`
	Retrying
}

// CancelledParams are notifications/cancelled's.
type CancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// InitializeParams are initialize's (2025).
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// paramsOf is the params type of each method a client sends; any other
// method's params are checked for duplicates only.
var paramsOf = map[string]reflect.Type{
	"initialize":               reflect.TypeFor[InitializeParams](),
	"server/discover":          reflect.TypeFor[ListParams](),
	"ping":                     reflect.TypeFor[ListParams](),
	"tools/list":               reflect.TypeFor[ListParams](),
	"prompts/list":             reflect.TypeFor[ListParams](),
	"resources/list":           reflect.TypeFor[ListParams](),
	"resources/templates/list": reflect.TypeFor[ListParams](),
	"tasks/list":               reflect.TypeFor[ListParams](),
	"tools/call":               reflect.TypeFor[CallToolParams](),
	"resources/read":           reflect.TypeFor[ReadResourceParams](),
	"resources/subscribe":      reflect.TypeFor[ReadResourceParams](),
	"resources/unsubscribe":    reflect.TypeFor[ReadResourceParams](),
	"prompts/get":              reflect.TypeFor[GetPromptParams](),
	"completion/complete":      reflect.TypeFor[CompleteParams](),
	"subscriptions/listen":     reflect.TypeFor[ListenParams](),
	"tasks/get":                reflect.TypeFor[TaskParams](),
	"tasks/update":             reflect.TypeFor[TaskParams](),
	"tasks/cancel":             reflect.TypeFor[TaskParams](),
	"tasks/result":             reflect.TypeFor[TaskParams](),
	"notifications/cancelled":  reflect.TypeFor[CancelledParams](),
}

// message is a JSON-RPC message's members; Params is filled in per method.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// messageShapes is the shape of a message by method (the params' shape
// in place), built once.
var messageShapes = func() map[string]*shape {
	base := shapeOf(reflect.TypeFor[message]())
	out := map[string]*shape{"": base}
	for m, t := range paramsOf {
		fields := make(map[string]*shape, len(base.fields))
		for k, v := range base.fields {
			fields[k] = v
		}
		fields["params"] = shapeOf(t)
		out[m] = &shape{fields: fields}
	}
	return out
}()

// CheckMessage holds a client's message (or batch) to strict keys, in
// either era, before anything reads it: no object names a member twice
// (arguments included), and no key is a case variant of one the message
// or its method's params declare (see [KeyError]). A refusal is -32600
// (a key of the message itself) or -32602 (one inside params), HTTP 400,
// naming the key. Invalid JSON is not this check's to refuse: it passes
// (nil), and the transport answers it as ever.
func CheckMessage(msg []byte) *Error {
	if jsonscan.Check(msg) != nil {
		return nil
	}
	i := jsonscan.SkipSpace(msg, 0)
	var err error
	switch {
	case i < len(msg) && msg[i] == '[':
		n := 0
		jsonscan.Array(msg, i, func(at int) int {
			err = checkOne(msg[at:jsonscan.ValueEnd(msg, at)], &pathNode{index: n})
			n++
			if err != nil {
				return -1
			}
			return jsonscan.ValueEnd(msg, at)
		})
	case i < len(msg) && msg[i] == '{':
		err = checkOne(msg, nil)
	}
	if err == nil {
		return nil
	}
	ke, _ := err.(*KeyError)
	code := CodeInvalidRequest
	if ke != nil && (strings.HasPrefix(ke.Path, "params") || strings.Contains(ke.Path, "].params")) {
		code = CodeInvalidParams
	}
	return &Error{Code: code, Message: err.Error(), Status: http.StatusBadRequest}
}

// checkOne checks one message of a batch (at its place) or the message.
func checkOne(msg []byte, at *pathNode) error {
	sh := messageShapes[""]
	if m, ok := jsonscan.Lookup(msg, "method"); ok {
		if s, ok := messageShapes[jsonscan.Unquote(m)]; ok {
			sh = s
		}
	}
	i := jsonscan.SkipSpace(msg, 0)
	_, err := walkKeys(msg, i, sh, at)
	return err
}
