package wire

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// JSON-RPC and MCP error codes used on the wire (the MCP ones as go-sdk v1.8.0
// names them in mcp/shared.go).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeHeaderMismatch: an HTTP header disagrees with the body, or a required
	// one is missing.
	CodeHeaderMismatch = -32020
	// CodeMissingCapability: the request needs a client capability it did not
	// declare.
	CodeMissingCapability = -32021
	// CodeUnsupportedVersion: the request's protocol version is not served.
	CodeUnsupportedVersion = -32022
)

// Error is a JSON-RPC error with the HTTP status it is sent with. It is what
// every check in this package returns, so the front door writes it as is.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	// Status is the HTTP status (see [StatusOf]); it is not on the wire.
	Status int `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// HTTPStatus is the status e is sent with: Status, or [StatusOf] its code
// when Status was left zero (a zero status is no status: net/http panics
// on it).
func (e *Error) HTTPStatus() int {
	if e.Status != 0 {
		return e.Status
	}
	return StatusOf(e.Code)
}

// StatusOf is the HTTP status an error code is sent with in answer to a
// 2026-07-28 request, as go-sdk v1.8.0 sends them (extractErrorStatus, and
// servePOST for header mismatches and bodies it cannot read): method not found
// 404; invalid params, header mismatch, missing capability and unsupported
// version 400; parse error and invalid request 400; anything else (a tool's or
// an upstream's error) 200. A 2025 session's errors all go in a 200 response.
func StatusOf(code int) int {
	switch code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams, CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion,
		CodeParseError, CodeInvalidRequest:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func newError(code int, msg string, data json.RawMessage) *Error {
	return &Error{Code: code, Message: msg, Data: data, Status: StatusOf(code)}
}

// InvalidParams is -32602 (HTTP 400).
func InvalidParams(format string, args ...any) *Error {
	return newError(CodeInvalidParams, fmt.Sprintf(format, args...), nil)
}

// HeaderMismatch is -32020 (HTTP 400).
func HeaderMismatch(format string, args ...any) *Error {
	return newError(CodeHeaderMismatch, fmt.Sprintf(format, args...), nil)
}

// MethodNotFound is -32601 (HTTP 404), for an unknown method and for one the
// request's era does not have (initialize or ping in 2026-07-28).
func MethodNotFound(method string) *Error {
	return newError(CodeMethodNotFound, fmt.Sprintf("method not found: %q", method), nil)
}

// MissingCapability is -32021 (HTTP 400) with data
// {"requiredCapabilities": required}; required is a ClientCapabilities object.
func MissingCapability(required json.RawMessage) *Error {
	if !json.Valid(required) {
		required = json.RawMessage("{}")
	}
	data, _ := json.Marshal(struct {
		Required json.RawMessage `json:"requiredCapabilities"`
	}{required})
	return newError(CodeMissingCapability, "missing required client capabilities", data)
}

// UnsupportedVersion is -32022 (HTTP 400) with data
// {"supported": [Served()...], "requested": requested}, the shape of go-sdk's
// UnsupportedProtocolVersionData.
func UnsupportedVersion(requested string) *Error {
	data, _ := json.Marshal(struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}{Served(), requested})
	return newError(CodeUnsupportedVersion, fmt.Sprintf("unsupported protocol version %q", requested), data)
}
