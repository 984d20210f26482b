package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// ClientMeta is the calling client's part of a 2026-07-28 request's
// envelope: its capabilities (the clientCapabilities object as sent, or
// a 2025 session's initialize capabilities; nil is {}) and the log level it
// asked for ("" for the upstream's session level). A request to a 2025
// upstream ignores it.
type ClientMeta struct {
	Caps     json.RawMessage
	LogLevel string
}

type clientKey struct{}

// WithClient makes the requests sent with ctx to a 2026-07-28 upstream
// declare m: capabilities are per request in that revision ("servers
// MUST NOT infer capabilities from prior requests"), so a call carries the
// caller's. Without it a request declares only the offer's extensions
// (none: {}), as re-listings do.
func WithClient(ctx context.Context, m ClientMeta) context.Context {
	return context.WithValue(ctx, clientKey{}, m)
}

func clientOf(ctx context.Context) (ClientMeta, bool) {
	m, ok := ctx.Value(clientKey{}).(ClientMeta)
	return m, ok
}

// offerKey marks the probe, which declares what the proxy offers
// ([Upstream.Start]'s offer) rather than one caller's capabilities.
type offerKey struct{}

// InputRequired is a 2026-07-28 upstream's input-required result to a
// call: the input requests it needs answered, by key, and its opaque state
// to echo on the retry. [Upstream.Call] returns it as its error, so that a
// caller that does not bridge it (divert, charging) never takes it for a
// result.
type InputRequired wire.InputRequired

func (e *InputRequired) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kinds := make([]string, len(keys))
	for i, k := range keys {
		var r struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(e.Requests[k], &r)
		kinds[i] = r.Method + " (" + k + ")"
	}
	if len(kinds) == 0 {
		return "the upstream needs input (requestState only)"
	}
	return "the upstream needs input: " + strings.Join(kinds, ", ")
}

// Protocol is the revision an upstream speaks and why: "2026-07-28" with
// How "server/discover", or the version initialize negotiated with How
// "initialize" and what ruled the probe out ("initialize; discover: -32601
// method not found"). Empty before the first connection.
type Protocol struct {
	Version string
	How     string
	// probed: the How of a 2025 verdict came from a probe that was
	// answered, so a reconnection need not probe again.
	probed bool
}

func (p Protocol) String() string {
	if p.Version == "" {
		return "unknown (not connected yet)"
	}
	return p.Version + " (" + p.How + ")"
}

// Protocol is the revision the upstream spoke at its last connection and
// why.
func (u *Upstream) Protocol() Protocol {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.proto
}

// modernConn is a connection speaking 2026-07-28 (its requests carry the
// envelope).
type modernConn interface{ isModern() bool }

func (p *peer) isModern() bool { return p.envelope.Load() != nil }

func isModern(c conn) bool {
	m, ok := c.(modernConn)
	return ok && m.isModern()
}

// wireSwitch is the part of a connection that changes with the era.
type httpModern interface {
	setModern(on bool, bindings func(tool string) []wire.Binding)
}

// useModern puts c on the 2026-07-28 wire (on) or the 2025 one.
func (u *Upstream) useModern(c conn, on bool) {
	if p, ok := c.(interface {
		setEnvelope(func(context.Context) wire.Envelope)
	}); ok {
		if on {
			p.setEnvelope(u.envelope)
		} else {
			p.setEnvelope(nil)
		}
	}
	if h, ok := c.(httpModern); ok {
		h.setModern(on, u.toolBindings)
	}
}

// envelope is the envelope of a request sent with ctx: our clientInfo, the
// caller's capabilities and log level ([WithClient]; the offer for the
// probe; the offer's extensions otherwise), else the session level set
// with SetLogLevel.
func (u *Upstream) envelope(ctx context.Context) wire.Envelope {
	env := wire.Envelope{Version: wire.Revision20260728, ClientInfo: u.clientInfo}
	if m, ok := clientOf(ctx); ok {
		env.Caps.Raw, env.LogLevel = m.Caps, m.LogLevel
	} else {
		env.Caps.Raw = u.listCaps
	}
	if ctx.Value(offerKey{}) != nil {
		env.Caps.Raw = u.offerJSON
	}
	if env.LogLevel == "" {
		u.mu.Lock()
		if u.caps.Logging != nil {
			env.LogLevel = u.logLevel
		}
		u.mu.Unlock()
	}
	return env
}

// toolBindings are the x-mcp-header bindings of a listed tool.
func (u *Upstream) toolBindings(tool string) []wire.Binding {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bindings[tool]
}

// probeTimeout bounds server/discover: a 2025 stdio server may ignore a
// request it does not know, so it is never waited for long.
func (u *Upstream) probeTimeout() time.Duration {
	t := u.cfg.Timeout
	if u.stdio() && t > maxStdioProbe {
		t = maxStdioProbe
	}
	return t
}

// maxStdioProbe bounds waiting for a stdio server's answer to the probe.
var maxStdioProbe = 5 * time.Second

func (u *Upstream) stdio() bool {
	return u.cfg.Transport == config.TransportStdio || u.cfg.Transport == ""
}

// probeVerdict is what server/discover said.
type probeVerdict uint8

const (
	probeModern  probeVerdict = iota
	probeLegacy               // initialize on the same connection
	probeRespawn              // the process exited: initialize a new one
)

// probe asks c for server/discover with the 2026-07-28 envelope. Modern
// when its supportedVersions has 2026-07-28; a -32022 listing it is tried
// once more; any other JSON-RPC error, an HTTP error without one (an HTML
// 404), a result without it, or (stdio) no answer within [probeTimeout],
// is 2025, with why. err is for what no era explains: the upstream
// unreachable, ctx ended. c is left on the wire of the verdict.
func (u *Upstream) probe(ctx context.Context, c conn) (d wire.Discover, v probeVerdict, why string, err error) {
	u.useModern(c, true)
	defer func() {
		if v != probeModern || err != nil {
			u.useModern(c, false)
		}
	}()
	timeout := u.probeTimeout()
	for attempt := 0; ; attempt++ {
		pctx, cancel := context.WithTimeout(context.WithValue(context.WithValue(ctx, quietKey{}, true), offerKey{}, true), timeout)
		res, cerr := c.Call(pctx, "server/discover", nil)
		timedOut := errors.Is(pctx.Err(), context.DeadlineExceeded)
		cancel()
		if cerr == nil {
			d, perr := wire.ParseDiscover(res)
			switch {
			case perr != nil:
				return d, probeLegacy, "discover: " + perr.Error(), nil
			case d.Speaks20260728():
				return d, probeModern, "server/discover", nil
			}
			return d, probeLegacy, fmt.Sprintf("discover: supportedVersions %v", d.SupportedVersions), nil
		}
		if ctx.Err() != nil {
			return d, probeLegacy, "", ctx.Err()
		}
		select {
		case <-c.Done():
			if u.stdio() {
				return d, probeRespawn, "discover: the process exited", nil
			}
			return d, probeLegacy, "", cerr
		default:
		}
		var rerr *RPCError
		var se *statusError
		switch {
		case errors.As(cerr, &rerr):
			if rerr.Code == wire.CodeUnsupportedVersion && attempt == 0 && supports(rerr.Data, wire.Revision20260728) {
				continue // go-sdk's client retries once with a mutual version; ours is the one modern revision
			}
			return d, probeLegacy, fmt.Sprintf("discover: %d %s", rerr.Code, rerr.Message), nil
		case errors.As(cerr, &se):
			return d, probeLegacy, "discover: " + se.msg, nil
		case errors.Is(cerr, ErrInvalidResponse):
			return d, probeLegacy, "discover: " + cerr.Error(), nil
		case timedOut && u.stdio():
			return d, probeLegacy, fmt.Sprintf("discover: no answer within %s", timeout), nil
		}
		return d, probeLegacy, "", cerr
	}
}

// supports reports whether a -32022 error's data lists version in
// supported.
func supports(data json.RawMessage, version string) bool {
	var d struct {
		Supported []string `json:"supported"`
	}
	return json.Unmarshal(data, &d) == nil && slices.Contains(d.Supported, version)
}

// connectModern makes c, which answered server/discover with d, the
// upstream's 2026-07-28 connection: capabilities from d, an initialize
// result synthesized for what reads one (doctor, the catalogue), listings.
func (u *Upstream) connectModern(ctx context.Context, c conn, d wire.Discover) (conn, error) {
	var caps Capabilities
	if err := json.Unmarshal(d.Capabilities, &caps); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w: server/discover capabilities: %v", ErrInvalidResponse, err)
	}
	serverInfo := d.ServerInfo
	if len(serverInfo) == 0 {
		serverInfo = json.RawMessage(`{"name":"","version":""}`)
	}
	initRes, err := json.Marshal(struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions,omitempty"`
	}{wire.Revision20260728, d.Capabilities, serverInfo, d.Instructions})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w: server/discover: %v", ErrInvalidResponse, err)
	}
	u.mu.Lock()
	u.initRes, u.caps = initRes, caps
	u.mu.Unlock()
	// The listen stream first, then the listings: a change in between is
	// announced on it, not lost.
	stop := u.startListen(ctx, c)
	if err := u.relist(ctx, c, KindAll); err != nil {
		stop()
		_ = c.Close()
		return nil, err
	}
	u.mu.Lock()
	u.proto = Protocol{Version: wire.Revision20260728, How: "server/discover"}
	u.stopListen = stop
	u.mu.Unlock()
	if u.opts.OnListChanged != nil {
		u.opts.OnListChanged(u)
	}
	return c, nil
}

// modernOnly answers, for a 2026-07-28 upstream, the 2025 methods that
// revision removed, so that callers need not know the era: a resource
// subscription is kept for subscriptions/listen, logging/setLevel and ping
// need nothing; any other removed method is -32601 without a round trip.
// handled is false for a method the upstream serves.
func (u *Upstream) modernOnly(method string, params any) (res json.RawMessage, err error, handled bool) {
	m, known := wire.Method(method)
	if !known || m.In20260728 {
		return nil, nil, false
	}
	switch method {
	case "resources/subscribe", "resources/unsubscribe":
		var p struct {
			URI string `json:"uri"`
		}
		b, _ := json.Marshal(params)
		if json.Unmarshal(b, &p) != nil || p.URI == "" {
			return nil, &RPCError{Code: wire.CodeInvalidParams, Message: method + ": uri is required"}, true
		}
		u.subscribe(p.URI, method == "resources/subscribe")
		return json.RawMessage(`{}`), nil, true
	case "logging/setLevel", "ping":
		return json.RawMessage(`{}`), nil, true
	}
	return nil, &RPCError{Code: wire.CodeMethodNotFound, Message: fmt.Sprintf("%s is not in MCP %s, which upstream %q speaks", method, wire.Revision20260728, u.cfg.Name)}, true
}

// subscribe records (or drops) a resource subscription; a 2026-07-28
// upstream hears of it on its subscriptions/listen stream.
func (u *Upstream) subscribe(uri string, on bool) {
	u.mu.Lock()
	if u.subs == nil {
		u.subs = map[string]bool{}
	}
	if on {
		u.subs[uri] = true
	} else {
		delete(u.subs, uri)
	}
	u.mu.Unlock()
	u.listenChanged()
}

// inputRequired is the error for a 2026-07-28 result that asks for input,
// nil for any other result; typ is its resultType. Only the top level is
// looked at.
func inputRequired(method string, res json.RawMessage, typ string) error {
	if typ != wire.ResultInputRequired {
		return nil
	}
	ir, err := wire.ParseInputRequired(res)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalidResponse, method, err)
	}
	return (*InputRequired)(&ir)
}
