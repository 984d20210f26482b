package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// ErrNotInputRequired is returned by [ParseInputRequired] for a result that
// is not a well-formed input-required result.
var ErrNotInputRequired = errors.New("not an input-required result")

// InputRequired is a 2026-07-28 input-required result: the input requests
// the server needs answered, by key, and its opaque state to echo on the
// retry. At least one of the two is set.
type InputRequired struct {
	// Requests maps a key to {"method": ..., "params": ...} as sent.
	Requests map[string]json.RawMessage
	State    string
}

// ParseResultType is a result's resultType; "complete" when it has none
// (a 2025 result, or a server that leaves it out). raw must be valid JSON
// (every result is validated where it is read: the upstream client, our
// own encoder): it is not validated again, since a result may be
// hundreds of megabytes and this is asked of each on the hot path; on
// other input the answer is only as good as [jsonscan.Lookup]'s.
func ParseResultType(raw []byte) string {
	return resultType(jsonscan.Lookup(raw, "resultType"))
}

// ResultTypeOfMembers is [ParseResultType] of a result whose members are
// known already (offsets into msg, as a [jsonscan.Stream] reading the
// message found them: [jsonscan.Stream.InnerMembers]), without walking
// it: a result may be hundreds of megabytes, and walking its members
// means skipping each one's value. ok is false when a key is written with
// escapes (rare; ParseResultType then decides).
func ResultTypeOfMembers(msg []byte, members []jsonscan.Member) (_ string, ok bool) {
	var v []byte
	found := false
	for _, m := range members {
		key := msg[m.KeyStart:m.KeyEnd]
		if bytes.IndexByte(key, '\\') >= 0 {
			return "", false
		}
		if string(key) == "resultType" {
			v, found = msg[m.ValueStart:m.ValueEnd], true // the last, as Lookup
		}
	}
	return resultType(v, found), true
}

// resultType is the resultType member's value v, if found.
func resultType(v []byte, found bool) string {
	if found && isString(v) {
		return jsonscan.Unquote(v)
	}
	return ResultComplete
}

// ParseInputRequired reads an input-required result: resultType
// "input_required", inputRequests an object whose every value is an object
// with a string method, requestState a string, at least one of the two.
// Anything else is [ErrNotInputRequired].
func ParseInputRequired(raw []byte) (InputRequired, error) {
	var ir InputRequired
	if ParseResultType(raw) != ResultInputRequired {
		return ir, fmt.Errorf("%w: resultType is %q", ErrNotInputRequired, ParseResultType(raw))
	}
	var r struct {
		Requests map[string]json.RawMessage `json:"inputRequests"`
		State    *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return ir, fmt.Errorf("%w: %v", ErrNotInputRequired, err)
	}
	for k, v := range r.Requests {
		var req struct {
			Method *string `json:"method"`
		}
		if !isObject(v) || json.Unmarshal(v, &req) != nil || req.Method == nil {
			return ir, fmt.Errorf("%w: inputRequests[%q] has no method", ErrNotInputRequired, k)
		}
	}
	if len(r.Requests) == 0 && r.State == nil {
		return ir, fmt.Errorf("%w: neither inputRequests nor requestState", ErrNotInputRequired)
	}
	ir.Requests = r.Requests
	if r.State != nil {
		ir.State = *r.State
	}
	return ir, nil
}

// EncodeInputRequired is ir as a result object (resultType, inputRequests,
// requestState; the empty ones left out). [Stamp] adds serverInfo.
func EncodeInputRequired(ir InputRequired) ([]byte, error) {
	if len(ir.Requests) == 0 && ir.State == "" {
		return nil, fmt.Errorf("%w: neither inputRequests nor requestState", ErrNotInputRequired)
	}
	return json.Marshal(struct {
		ResultType string                     `json:"resultType"`
		Requests   map[string]json.RawMessage `json:"inputRequests,omitempty"`
		State      string                     `json:"requestState,omitempty"`
	}{ResultInputRequired, ir.Requests, ir.State})
}

// Retry is what a retried request carries after an input-required result.
type Retry struct {
	// Responses maps a key to the client's answer (ElicitResult,
	// CreateMessageResult or ListRootsResult) as sent; nil if none.
	Responses map[string]json.RawMessage
	// State is requestState echoed verbatim, "" if absent.
	State string
}

// IsRetry reports whether the request continues an earlier one.
func (r Retry) IsRetry() bool { return r.Responses != nil || r.State != "" }

// ParseRetry reads inputResponses and requestState from a request's params.
// inputResponses that is null, not an object, or has a value that is not an
// object, and requestState that is not a string, are -32602 (HTTP 400).
func ParseRetry(params json.RawMessage) (Retry, *Error) {
	var r Retry
	if v, ok := member(params, "inputResponses"); ok {
		if !isObject(v) {
			return r, InvalidParams("inputResponses must be an object")
		}
		if err := json.Unmarshal(v, &r.Responses); err != nil {
			return Retry{}, InvalidParams("inputResponses: %v", err)
		}
		for k, resp := range r.Responses {
			if !isObject(resp) {
				return Retry{}, InvalidParams("inputResponses[%q] must be an object", k)
			}
		}
		if r.Responses == nil {
			r.Responses = map[string]json.RawMessage{}
		}
	}
	if v, ok := member(params, "requestState"); ok {
		if !isString(v) {
			return Retry{}, InvalidParams("requestState must be a string")
		}
		r.State = jsonscan.Unquote(v)
	}
	return r, nil
}
