package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// maxUnavailableWait bounds how long a call waits for an upstream that is
// restarting after a failure (or the server's timeout, when shorter).
const maxUnavailableWait = 10 * time.Second

// Call sends one request and returns its raw result. It waits for the
// upstream to be ready (see [Upstream] for how long); ctx bounds both the
// wait and the call, and a call given up is cancelled at the upstream
// (notifications/cancelled). An upstream's JSON-RPC error is an
// [*RPCError]. A request a streamable HTTP server refused because it lost
// the session ([ErrSessionExpired]) is sent again, once, on the new
// session.
//
// To a 2026-07-28 upstream every request carries the envelope (the
// caller's capabilities: [WithClient]) and, over HTTP, the Mcp-* headers;
// a call given up over HTTP is its POST closed; an input-required result
// is returned as an [*InputRequired] error; the 2025 methods that
// revision removed are answered here (subscriptions are kept for the
// listen stream, logging/setLevel and ping need nothing).
func (u *Upstream) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	res, _, err := u.call(ctx, method, params, false)
	return res, err
}

// CallTyped is [Upstream.Call] that also returns the result's resultType
// as [wire.ParseResultType] gives it. For an answer validated as it
// arrived (a long one) the reader found it on the way, so a big result
// is not walked again to learn it (walking means skipping every member's
// value: the whole text of a 100 MB result); otherwise it is asked once,
// here, where the input-required check needs it too.
func (u *Upstream) CallTyped(ctx context.Context, method string, params any) (json.RawMessage, string, error) {
	return u.call(ctx, method, params, true)
}

// call is Call; typed asks for the result's type (a 2026-07-28
// upstream's is always looked at, for input-required).
func (u *Upstream) call(ctx context.Context, method string, params any, typed bool) (json.RawMessage, string, error) {
	resent := false
	for {
		c, err := u.await(ctx)
		if err != nil {
			return nil, "", err
		}
		modern := isModern(c)
		if modern {
			if res, err, handled := u.modernOnly(method, params); handled {
				typ := ""
				if err == nil && typed {
					typ = wire.ParseResultType(res)
				}
				return res, typ, err
			}
		}
		res, typ, err := c.callTyped(ctx, method, params)
		if err == nil && (modern || typed) && typ == "" {
			typ = wire.ParseResultType(res)
		}
		if err == nil && modern {
			if ir := inputRequired(method, res, typ); ir != nil {
				return nil, "", ir
			}
		}
		// A request that never left is sent again, once, on the next
		// connection: after a 404 of a lost session, or when the
		// connection ended just before it could go out.
		var notSent *notSentError
		if !resent && errors.As(err, &notSent) && (errors.Is(err, ErrSessionExpired) || errors.Is(err, errConnEnded)) {
			resent = true
			u.log.Debug("re-sending on a new session", "method", method)
			continue
		}
		if errors.Is(err, ErrUpstreamExited) {
			return nil, "", fmt.Errorf("upstream %q exited during the call: %w", u.cfg.Name, err)
		}
		if err != nil {
			return res, "", err
		}
		return res, typ, nil
	}
}

// Notify sends a notification if connected; otherwise it is dropped, as a
// notification to a server that is not there means nothing to it.
func (u *Upstream) Notify(ctx context.Context, method string, params any) error {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	if c == nil {
		return nil
	}
	if isModern(c) {
		// 2026-07-28 has no client notifications but cancelled (sent by
		// Call itself, over stdio): roots/list_changed and the like mean
		// nothing to it.
		return nil
	}
	return c.Notify(ctx, method, params)
}

// await returns the live connection, waiting for one while the upstream
// connects; while it is restarting after a failure, at most
// min(server timeout, [maxUnavailableWait]).
func (u *Upstream) await(ctx context.Context) (conn, error) {
	bound := maxUnavailableWait
	if t := u.cfg.Timeout; t > 0 && t < bound {
		bound = t
	}
	var deadline <-chan time.Time
	for {
		u.mu.Lock()
		c, state, lastErr, changed := u.c, u.state, u.lastErr, u.changed
		u.mu.Unlock()
		if c != nil {
			select {
			case <-c.Done():
				// Dead but not yet replaced by the supervisor: wait for
				// the restart rather than fail on a connection known gone.
				lastErr = c.Err()
				state = StateRestarting
			default:
				return c, nil
			}
		}
		unavailable := &unavailableError{name: u.cfg.Name, state: state, last: lastErr}
		// Waiting for a login is waiting for a person: the call fails at
		// once, naming the command to run.
		if state == StateFailed || state == StateStopped || errors.Is(lastErr, oauth.ErrLoginRequired) {
			return nil, unavailable
		}
		if lastErr != nil && deadline == nil {
			t := time.NewTimer(bound)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-changed:
		case <-deadline:
			return nil, unavailable
		case <-ctx.Done():
			return nil, unavailable
		}
	}
}
