package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// Sentinel errors. Match them with [errors.Is]; the errors that carry them
// say more (which upstream, why).
var (
	// ErrUpstreamExited means the connection ended (the process exited,
	// the stream closed, the server became unreachable) while a call was
	// in flight, or before it could be sent.
	ErrUpstreamExited = errors.New("upstream exited")
	// ErrUpstreamUnavailable means the upstream is not connected
	// (connecting, restarting, given up or stopped) and did not become
	// ready in time. The error names the upstream, its state and its last
	// error.
	ErrUpstreamUnavailable = errors.New("upstream unavailable")
	// ErrInvalidResponse means an upstream answered with something that is
	// not valid JSON-RPC or not the shape the method requires.
	ErrInvalidResponse = errors.New("invalid response from upstream")
	// ErrSessionExpired means a streamable HTTP upstream answered 404 to a
	// request carrying its session id: the server no longer knows the
	// session (it restarted, or expired it). [Upstream.Call] re-initializes
	// and re-sends the request once, so callers only see it when that
	// fails too.
	ErrSessionExpired = errors.New("upstream session expired")
	// ErrAnswerLost means a streamable HTTP upstream ended the event
	// stream of a request's answer before the answer, and the stream
	// could not be resumed (no event id, or too many tries). The upstream
	// itself may be fine: later calls are sent as usual.
	ErrAnswerLost = errors.New("answer lost")
	// ErrResultTooLarge means an upstream's answer was bigger than the
	// server's max_result_bytes: it was skipped unread. The error is a
	// [*TooLargeError] with the sizes.
	ErrResultTooLarge = errors.New("result too large")
)

// TooLargeError is [ErrResultTooLarge] with the message's size (at least
// Size bytes when it was not read to its end) and the limit.
type TooLargeError struct {
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer is %d bytes or more, over max_result_bytes (%d)", e.Size, e.Max)
}

func (e *TooLargeError) Is(target error) bool { return target == ErrResultTooLarge }

// RPCError is a JSON-RPC error response from an upstream, with its code,
// message and data as sent.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream error %d: %s", e.Code, e.Message)
}

// MaxErrorBytes bounds the message and the data of an upstream's JSON-RPC
// error as they are passed on: an error is for a person or a model to
// read, and one of megabytes would flood the client's context (or its
// memory) for nothing.
const MaxErrorBytes = 64 << 10

// bounded is e with a message over [MaxErrorBytes] cut (on a rune
// boundary, with a note of its size) and data over it dropped (noted in
// the message).
func (e *RPCError) bounded() *RPCError {
	if len(e.Message) <= MaxErrorBytes && len(e.Data) <= MaxErrorBytes {
		return e
	}
	out := *e
	if n := len(out.Message); n > MaxErrorBytes {
		cut := MaxErrorBytes
		for cut > 0 && !utf8.RuneStart(out.Message[cut]) {
			cut--
		}
		out.Message = out.Message[:cut] + fmt.Sprintf("… [the upstream's message was %d bytes; cut at %d]", n, cut)
	}
	if n := len(out.Data); n > MaxErrorBytes {
		out.Data = nil
		out.Message += fmt.Sprintf(" [its data, %d bytes, was dropped]", n)
	}
	return &out
}

// unavailableError is [ErrUpstreamUnavailable] with the upstream's name,
// state and last error, which is what an operator needs to act on.
type unavailableError struct {
	name, state string
	last        error
}

func (e *unavailableError) Error() string {
	if e.last == nil {
		return fmt.Sprintf("upstream %q is unavailable: %s", e.name, e.state)
	}
	return fmt.Sprintf("upstream %q is unavailable: %s after: %v", e.name, e.state, e.last)
}

// Is makes the error match [ErrUpstreamUnavailable], and
// [oauth.ErrLoginRequired] when that is why. It deliberately does not
// unwrap to the last error: a call that was never sent must not look
// like one that was cut off ([ErrUpstreamExited]).
func (e *unavailableError) Is(target error) bool {
	return target == ErrUpstreamUnavailable || target == oauth.ErrLoginRequired && errors.Is(e.last, oauth.ErrLoginRequired)
}

// LoginError is the [*oauth.LoginError] err carries, if any: the reason a
// call to an upstream behind OAuth failed, and the command that fixes it.
func LoginError(err error) (*oauth.LoginError, bool) {
	if ue, ok := errors.AsType[*unavailableError](err); ok {
		err = ue.last
	}
	le, ok := errors.AsType[*oauth.LoginError](err)
	return le, ok
}

// notSentError is a request that never reached the upstream, so sending
// it again cannot run it twice.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// errConnEnded is a request that was not sent because its connection had
// ended; with [notSentError] it may be sent on the next connection.
var errConnEnded = errors.New("the connection ended before the request was sent")

// statusError is an HTTP answer outside 2xx.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

// maxErrorBody bounds the error body read for a JSON-RPC error: its
// message and data are cut to [MaxErrorBytes] each anyway.
const maxErrorBody = 2*MaxErrorBytes + 4<<10

// rpcErrorBody is the JSON-RPC error a 4xx/5xx answer carries as its
// application/json body, nil for any other answer. It reads the body only
// for a JSON error status, and restores what it read, so that
// [httpStatusError] still quotes a body that was not one.
func rpcErrorBody(resp *http.Response) *RPCError {
	if resp.StatusCode < 400 {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	m, err := decodeMessage(b)
	if err != nil || m.Error == nil || m.Method != "" {
		return nil
	}
	return m.Error.bounded()
}

// httpStatusError is nil for a 2xx response, else a [*statusError] naming
// the status and the start of the body.
func httpStatusError(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 201))
	msg := truncate(strings.TrimSpace(string(b)), 200)
	if resp.Request != nil && resp.Request.URL != nil {
		// An error page may quote the path it was asked for.
		msg = config.RedactURLIn(msg, resp.Request.URL.String())
	}
	if msg == "" {
		return &statusError{resp.StatusCode, "HTTP " + resp.Status}
	}
	return &statusError{resp.StatusCode, "HTTP " + resp.Status + ": " + msg}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
