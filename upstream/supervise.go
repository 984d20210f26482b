package upstream

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// ProtocolVersion is the MCP protocol version offered at initialize: the
// newest with an initialize handshake (2026-07-28 is stateless and has
// none). The upstream may answer with an older one, which is then sent on
// every streamable HTTP request.
const ProtocolVersion = "2025-11-25"

// ListKind names listings: a set of them, for what a list_changed
// notification made stale and what [Upstream.Refresh] may re-list.
type ListKind uint8

// The listings of an upstream. KindResources is resources and resource
// templates.
const (
	KindTools ListKind = 1 << iota
	KindResources
	KindPrompts
	KindAll = KindTools | KindResources | KindPrompts
)

// markDirty records that a listing is stale and wakes the supervisor.
func (u *Upstream) markDirty(k ListKind) {
	u.mu.Lock()
	u.dirty |= k
	u.mu.Unlock()
	select {
	case u.refresh <- struct{}{}:
	default:
	}
}

// backoff is the wait before reconnect attempt n (1-based): 250ms doubling,
// capped by restart_backoff_max.
func (u *Upstream) backoff(n int) time.Duration {
	d := 250 * time.Millisecond
	for i := 1; i < n && d < u.cfg.RestartBackoffMax; i++ {
		d *= 2
	}
	if max := u.cfg.RestartBackoffMax; max > 0 && d > max {
		d = max
	}
	return d
}

// loginPoll is how often an upstream waiting for an OAuth login tries
// again.
const loginPoll = 2 * time.Second

// awaitLogin waits loginPoll, or less when the credentials change (a
// login through the server came back); false when ctx ended.
func (u *Upstream) awaitLogin(ctx context.Context) bool {
	var changed <-chan struct{}
	if u.opts.Auth != nil {
		changed = u.opts.Auth.Changed()
	}
	t := time.NewTimer(loginPoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-changed:
	}
	return true
}

// lastError is the error of the last connection attempt.
func (u *Upstream) lastError() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.lastErr
}

// listFailed logs a listing that failed: at INFO when the server has no
// such method (-32601: a server that declares resources but no templates
// is normal), else as a warning.
func listFailed(log *slog.Logger, msg string, err error) {
	var rerr *RPCError
	if errors.As(err, &rerr) && rerr.Code == wire.CodeMethodNotFound {
		log.Info(msg, "error", err)
		return
	}
	log.Warn(msg, "error", err)
}

// slowStart is how long a connection attempt may take before the log
// says the upstream is still starting.
const slowStart = 3 * time.Second

func (u *Upstream) supervise(ctx context.Context) {
	defer close(u.stopped)
	failures := 0
	expired := false // the last connection ended with its session expired
	for {
		// A start that takes long is said, naming the server (u.log
		// carries it): a server that hangs is otherwise only silence.
		began := time.Now()
		slow := time.AfterFunc(slowStart, func() {
			// Info: npx fetching a package takes longer than this
			// on a first start, and that is normal.
			u.log.Info("upstream still starting", "waited", time.Since(began).Round(time.Second).String())
		})
		c, err := u.connect(ctx)
		slow.Stop()
		if err == nil {
			failures = 0
			u.log.Info("upstream ready", "tools", len(u.Tools()))
			readyAt := time.Now()
			err = u.serve(ctx, c)
			_ = c.Close()
			if ctx.Err() != nil {
				u.setState(StateStopped, nil)
				return
			}
			// The server is there and forgot the session: a new one now,
			// so that the call that met the 404 is re-sent at once. Not
			// when a fresh session expired as fast as the last one: a
			// server that forgets every session gets the backoff.
			quick := expired && time.Since(readyAt) < time.Second
			expired = errors.Is(err, ErrSessionExpired)
			if expired && !quick {
				u.log.Info("upstream session expired; re-initializing", "error", err)
				u.setState(StateRestarting, err)
				continue
			}
			u.log.Warn("upstream connection lost", "error", err)
		} else if ctx.Err() != nil {
			u.setState(StateStopped, nil)
			return
		} else if errors.Is(err, oauth.ErrLoginRequired) {
			// No token, and only a person can get one: not a failure
			// that backoff or giving up helps. The store is looked at
			// again every loginPoll (no network: the token is missing),
			// so a login in another process is picked up.
			expired = false
			if !errors.Is(u.lastError(), oauth.ErrLoginRequired) {
				u.log.Warn("upstream needs an OAuth login", "error", err)
			}
			u.setState(StateRestarting, err)
			if !u.awaitLogin(ctx) {
				u.setState(StateStopped, nil)
				return
			}
			continue
		} else {
			expired = false
			u.log.Error("upstream failed to start", "error", err)
		}
		failures++
		max := u.cfg.RestartMaxAttempts
		if max == config.NeverRestart || (max > 0 && failures > max) {
			u.log.Error("upstream given up", "attempts", failures, "error", err)
			u.setState(StateFailed, err)
			return
		}
		u.setState(StateRestarting, err)
		wait := u.backoff(failures)
		u.log.Info("upstream restarting", "attempt", failures, "in", wait.String())
		if u.opts.OnRestart != nil {
			u.opts.OnRestart(u)
		}
		if !sleep(ctx, wait) {
			u.setState(StateStopped, nil)
			return
		}
	}
}

// serve publishes c as the live connection until it dies or ctx ends, and
// re-lists whenever the upstream says a listing changed.
func (u *Upstream) serve(ctx context.Context, c conn) error {
	u.mu.Lock()
	u.c = c
	u.state, u.lastErr = StateReady, nil
	u.signalLocked()
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.c = nil
		u.signalLocked()
		u.mu.Unlock()
	}()
	defer func() {
		u.mu.Lock()
		stop := u.stopListen
		u.stopListen = nil
		u.mu.Unlock()
		if stop != nil {
			stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Done():
			return c.Err()
		case <-u.refresh:
			u.mu.Lock()
			kinds := u.dirty
			u.dirty = 0
			u.mu.Unlock()
			err := u.relist(ctx, c, kinds)
			u.mu.Lock()
			u.signalLocked() // a Refresh waits for it
			u.mu.Unlock()
			if err != nil {
				u.log.Warn("re-listing failed", "error", err)
				continue
			}
			if u.opts.OnListChanged != nil {
				u.opts.OnListChanged(u)
			}
		}
	}
}

// dial starts the configured transport.
func (u *Upstream) dial(ctx context.Context, h handlers) (conn, error) {
	switch u.cfg.Transport {
	case config.TransportStdio, "":
		argv := append(append([]string{}, u.cfg.Cmd...), u.cfg.Args...)
		return startStdio(u.cfg.Name, argv, u.cfg.Env, u.cfg.Cwd, h, u.log)
	case config.TransportSSE:
		return dialSSE(ctx, u.cfg.Timeout, u.cfg.Name, u.cfg.URL, u.cfg.Headers, u.wrap(), h, u.log)
	case config.TransportHTTPStreamable:
		return dialHTTP(ctx, u.hc, u.cfg.Name, u.cfg.URL, u.cfg.Headers, h, u.log)
	}
	return nil, fmt.Errorf("upstream %q: unknown transport %q", u.cfg.Name, u.cfg.Transport)
}

// connect starts the transport, finds the revision the upstream speaks
// (server/discover, unless protocol pins 2025-11-25 or a probe already
// said so), runs the 2025 handshake when that is the answer, and lists
// what the upstream offers.
func (u *Upstream) connect(ctx context.Context) (conn, error) {
	h := u.h
	userNotify := h.notify
	h.notify = func(method string, params json.RawMessage) {
		// Never re-list from here: the reply would queue behind this
		// very delivery. Signal the supervisor.
		switch method {
		case "notifications/tools/list_changed":
			u.markDirty(KindTools)
		case "notifications/resources/list_changed":
			u.markDirty(KindResources)
		case "notifications/prompts/list_changed":
			u.markDirty(KindPrompts)
		case "notifications/subscriptions/acknowledged":
			u.acknowledged(params) // the listen stream's, ours alone
			return
		}
		if userNotify != nil {
			userNotify(method, params)
		}
	}
	c, err := u.dial(ctx, h)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	last := u.proto
	u.mu.Unlock()
	why, probed := "", false
	switch {
	case u.cfg.Transport == config.TransportSSE:
		why = "sse transport"
	case u.cfg.Protocol == config.Protocol2025, u.cfg.Protocol == "":
		// "" is a Server built in code, not loaded: as before the key.
		why = fmt.Sprintf("protocol = %q", config.Protocol2025)
	case u.cfg.Protocol != config.Protocol20260728 && last.probed:
		// Asked before and answered: a 2025 server is not probed (for
		// up to 5 s, over stdio) at every reconnection. One that moved
		// to 2026-07-28 only refuses initialize with -32022, below.
		why, probed = strings.TrimPrefix(last.How, "initialize; "), true
	default:
		d, verdict, reason, err := u.probe(ctx, c)
		switch {
		case err != nil:
			_ = c.Close()
			return nil, fmt.Errorf("server/discover: %w", err)
		case verdict == probeModern:
			return u.connectModern(ctx, c, d)
		case u.cfg.Protocol == config.Protocol20260728:
			_ = c.Close()
			return nil, fmt.Errorf("protocol = %q, but the upstream does not speak it: %s", config.Protocol20260728, reason)
		case verdict == probeRespawn:
			// A 2025 server that exits on a request it does not know:
			// a fresh one is initialized, which is no restart failure.
			u.log.Info("upstream exited on server/discover; starting it again for initialize")
			_ = c.Close()
			if c, err = u.dial(ctx, h); err != nil {
				return nil, err
			}
		}
		why, probed = reason, true
	}
	return u.connectLegacy(ctx, c, why, probed)
}

// connectLegacy runs the 2025 handshake on c (initialize, initialized) and
// lists. why is what ruled 2026-07-28 out, for [Upstream.Protocol]; probed
// says a probe's answer did. An initialize refused with -32022 by a server
// whose supported versions have 2026-07-28 is answered by probing again.
func (u *Upstream) connectLegacy(ctx context.Context, c conn, why string, probed bool) (conn, error) {
	fail := func(err error) (conn, error) {
		_ = c.Close()
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	initRes, err := c.Call(hctx, "initialize", map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    u.offer,
		"clientInfo":      map[string]any{"name": u.opts.ClientName, "version": u.opts.ClientVersion},
	})
	if rerr, ok := errors.AsType[*RPCError](err); ok && rerr.Code == wire.CodeUnsupportedVersion &&
		supports(rerr.Data, wire.Revision20260728) && u.cfg.Protocol == config.ProtocolAuto && u.cfg.Transport != config.TransportSSE {
		d, verdict, reason, perr := u.probe(ctx, c)
		if perr == nil && verdict == probeModern {
			return u.connectModern(ctx, c, d)
		}
		return fail(fmt.Errorf("initialize: %w; server/discover then: %s", err, cmp.Or(reason, fmt.Sprint(perr))))
	}
	if err != nil {
		return fail(fmt.Errorf("initialize: %w", err))
	}
	var init struct {
		ProtocolVersion string       `json:"protocolVersion"`
		Capabilities    Capabilities `json:"capabilities"`
	}
	if err := json.Unmarshal(initRes, &init); err != nil {
		return fail(fmt.Errorf("%w: initialize: %v", ErrInvalidResponse, err))
	}
	hs, _ := c.(handshaker)
	if hs != nil {
		hs.negotiated(init.ProtocolVersion)
	}
	if err := c.Notify(hctx, "notifications/initialized", nil); err != nil {
		return fail(fmt.Errorf("initialized notification: %w", err))
	}
	if hs != nil {
		hs.initialized()
	}
	u.mu.Lock()
	u.initRes = initRes
	u.caps = init.Capabilities
	level := u.logLevel
	u.mu.Unlock()
	if err := u.relist(ctx, c, KindAll); err != nil {
		return fail(err)
	}
	how := "initialize"
	if why != "" {
		how += "; " + why
	}
	u.mu.Lock()
	u.proto = Protocol{Version: init.ProtocolVersion, How: how, probed: probed}
	u.mu.Unlock()
	if level != "" && init.Capabilities.Logging != nil {
		sctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
		_, err := c.Call(sctx, "logging/setLevel", map[string]any{"level": level})
		cancel()
		if err != nil {
			u.log.Warn("forwarding logging/setLevel failed", "level", level, "error", err)
		}
	}
	if u.opts.OnListChanged != nil {
		u.opts.OnListChanged(u)
	}
	return c, nil
}

// listing is how fresh one kind of listing is: a 2026-07-28 upstream says
// for how long (ttlMs) a listing may be kept.
type listing struct {
	at    time.Time     // the last listing that succeeded
	ttl   time.Duration // its ttlMs, the least of its pages'
	tried time.Time     // the last attempt, successful or not
}

// minRelist bounds how often [Upstream.Refresh] re-lists one kind: a ttlMs
// of 0 (or a few) means "ask again" to a cache, but not once per request.
var minRelist = time.Second

// relist fetches the listings named by kinds that the upstream's
// capabilities offer. A server that does not list resources or prompts
// is simply left out; tools are always listed.
//
// Each listing gets the server's timeout of its own: a slow start-up
// should not make a server with many pages fail its handshake.
func (u *Upstream) relist(ctx context.Context, c conn, kinds ListKind) error {
	caps := u.Capabilities()
	modern := isModern(c)
	list := func(method, key, id string) ([]Item, time.Duration, error) {
		lctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
		defer cancel()
		return listAll(lctx, c, method, key, id)
	}
	// noted records an attempt at a kind, and its ttl when it worked.
	noted := func(kind ListKind, ttl time.Duration, ok bool) {
		now := time.Now()
		u.mu.Lock()
		l := u.listed[kind]
		l.tried = now
		if ok {
			l.at, l.ttl = now, ttl
		}
		u.listed[kind] = l
		u.mu.Unlock()
	}
	if kinds&KindTools != 0 {
		tools, ttl, err := list("tools/list", "tools", "name")
		noted(KindTools, ttl, err == nil)
		if err != nil {
			// The rest counts as tried: a Refresh waiting for it is done.
			for _, k := range []ListKind{KindResources, KindPrompts} {
				if kinds&k != 0 {
					noted(k, 0, false)
				}
			}
			return err
		}
		var bindings map[string][]wire.Binding
		if modern {
			tools, bindings = u.toolHeaders(tools)
		}
		u.mu.Lock()
		u.tools, u.bindings = tools, bindings
		u.mu.Unlock()
	}
	// Resources and prompts are extras: an upstream that fails to list
	// them still serves its tools.
	if kinds&KindResources != 0 && caps.Resources != nil {
		res, ttl, err := list("resources/list", "resources", "uri")
		if err != nil {
			listFailed(u.log, "listing resources failed", err)
		}
		tmpl, tttl, terr := list("resources/templates/list", "resourceTemplates", "uriTemplate")
		if terr != nil {
			listFailed(u.log, "listing resource templates failed", terr)
		}
		noted(KindResources, min(ttl, tttl), err == nil && terr == nil)
		u.mu.Lock()
		u.resources, u.templates = res, tmpl
		u.mu.Unlock()
	}
	if kinds&KindPrompts != 0 && caps.Prompts != nil {
		prompts, ttl, err := list("prompts/list", "prompts", "name")
		noted(KindPrompts, ttl, err == nil)
		if err != nil {
			listFailed(u.log, "listing prompts failed", err)
		}
		u.mu.Lock()
		u.prompts = prompts
		u.mu.Unlock()
	}
	return nil
}

// toolHeaders reads each tool's x-mcp-header bindings (the Mcp-Param-*
// headers its calls carry) and drops, with a warning, a tool whose
// annotations are invalid: a 2026-07-28 server would refuse its every call.
func (u *Upstream) toolHeaders(tools []Item) ([]Item, map[string][]wire.Binding) {
	bindings := map[string][]wire.Binding{}
	kept := tools[:0:0]
	for _, t := range tools {
		var def struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(t.Raw, &def)
		b, err := wire.ParamBindings(def.InputSchema)
		if err != nil {
			u.log.Warn("tool dropped: its x-mcp-header annotations are invalid", "tool", t.Name, "error", err)
			continue
		}
		if len(b) > 0 {
			bindings[t.Name] = b
		}
		kept = append(kept, t)
	}
	return kept, bindings
}

// Refresh re-lists, for a 2026-07-28 upstream, the kinds of listing whose
// ttlMs has passed (at most once per second and kind, however short the
// ttl) and waits for it, bounded by ctx. A 2025 upstream says when its
// listings change, so for it Refresh does nothing; nor for an upstream
// not connected. It returns ctx's error if it gave up waiting.
func (u *Upstream) Refresh(ctx context.Context, kinds ListKind) error {
	now := time.Now()
	u.mu.Lock()
	c, caps := u.c, u.caps
	if c == nil || !isModern(c) {
		u.mu.Unlock()
		return nil
	}
	var due ListKind
	for _, k := range []ListKind{KindTools, KindResources, KindPrompts} {
		if kinds&k == 0 || k == KindResources && caps.Resources == nil || k == KindPrompts && caps.Prompts == nil {
			continue
		}
		if u.covered(k) {
			continue // the listen stream says when it changes
		}
		l := u.listed[k]
		if now.Sub(l.tried) >= minRelist && now.Sub(l.at) >= l.ttl {
			due |= k
		}
	}
	if due == 0 {
		u.mu.Unlock()
		return nil
	}
	u.dirty |= due
	u.mu.Unlock()
	select {
	case u.refresh <- struct{}{}:
	default:
	}
	for {
		u.mu.Lock()
		done := true
		for _, k := range []ListKind{KindTools, KindResources, KindPrompts} {
			if due&k != 0 && u.listed[k].tried.Before(now) {
				done = false
			}
		}
		changed := u.changed
		u.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// listAll follows cursors until the upstream has listed every item of a
// list method; key names the result's array, id the field that names an
// item. ttl is the least ttlMs of the pages (0 when none has one).
func listAll(ctx context.Context, c conn, method, key, id string) (out []Item, ttl time.Duration, err error) {
	cursor := ""
	ttl = -1
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, 0, fmt.Errorf("%w: %s did not stop paginating", ErrInvalidResponse, method)
		}
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", method, err)
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(res, &list); err != nil {
			return nil, 0, fmt.Errorf("%w: %s: %v", ErrInvalidResponse, method, err)
		}
		var items []json.RawMessage
		if raw, ok := list[key]; ok && !bytes.Equal(raw, []byte("null")) {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, 0, fmt.Errorf("%w: %s: %s is not an array", ErrInvalidResponse, method, key)
			}
		}
		for _, raw := range items {
			var fields map[string]json.RawMessage
			var name string
			if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(fields[id], &name) != nil || name == "" {
				return nil, 0, fmt.Errorf("%w: %s: an item without %s", ErrInvalidResponse, method, id)
			}
			out = append(out, Item{Name: name, Raw: raw})
		}
		var ms int64
		if raw, ok := list["ttlMs"]; ok && json.Unmarshal(raw, &ms) == nil && ms >= 0 {
			if d := time.Duration(ms) * time.Millisecond; ttl < 0 || d < ttl {
				ttl = d
			}
		}
		var next string
		if raw, ok := list["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &next)
		}
		if next == "" {
			return out, max(ttl, 0), nil
		}
		cursor = next
	}
}
