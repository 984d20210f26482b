package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// ProtocolVersion is the MCP protocol version offered at initialize: the
// newest with an initialize handshake (2026-07-28 is stateless and has
// none). The upstream may answer with an older one, which is then sent on
// every streamable HTTP request.
const ProtocolVersion = "2025-11-25"

// listKind says which listings a list_changed notification made stale.
type listKind uint8

const (
	kindTools listKind = 1 << iota
	kindResources
	kindPrompts
)

// markDirty records that a listing is stale and wakes the supervisor.
func (u *Upstream) markDirty(k listKind) {
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
			u.log.Warn("upstream still starting", "waited", time.Since(began).Round(time.Second).String())
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
			if err != nil {
				u.log.Warn("re-listing after list_changed failed", "error", err)
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

// connect starts the transport, runs the MCP handshake and lists what the
// upstream offers.
func (u *Upstream) connect(ctx context.Context) (conn, error) {
	h := u.h
	userNotify := h.notify
	h.notify = func(method string, params json.RawMessage) {
		// Never re-list from here: the reply would queue behind this
		// very delivery. Signal the supervisor.
		switch method {
		case "notifications/tools/list_changed":
			u.markDirty(kindTools)
		case "notifications/resources/list_changed":
			u.markDirty(kindResources)
		case "notifications/prompts/list_changed":
			u.markDirty(kindPrompts)
		}
		if userNotify != nil {
			userNotify(method, params)
		}
	}
	c, err := u.dial(ctx, h)
	if err != nil {
		return nil, err
	}
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
	if err := u.relist(ctx, c, kindTools|kindResources|kindPrompts); err != nil {
		return fail(err)
	}
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

// relist fetches the listings named by kinds that the upstream's
// capabilities offer. A server that does not list resources or prompts
// is simply left out; tools are always listed.
//
// Each listing gets the server's timeout of its own: a slow start-up
// should not make a server with many pages fail its handshake.
func (u *Upstream) relist(ctx context.Context, c conn, kinds listKind) error {
	caps := u.Capabilities()
	list := func(method, key, id string) ([]Item, error) {
		lctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
		defer cancel()
		return listAll(lctx, c, method, key, id)
	}
	if kinds&kindTools != 0 {
		tools, err := list("tools/list", "tools", "name")
		if err != nil {
			return err
		}
		u.mu.Lock()
		u.tools = tools
		u.mu.Unlock()
	}
	// Resources and prompts are extras: an upstream that fails to list
	// them still serves its tools.
	if kinds&kindResources != 0 && caps.Resources != nil {
		res, err := list("resources/list", "resources", "uri")
		if err != nil {
			u.log.Warn("listing resources failed", "error", err)
		}
		tmpl, terr := list("resources/templates/list", "resourceTemplates", "uriTemplate")
		if terr != nil {
			u.log.Warn("listing resource templates failed", "error", terr)
		}
		u.mu.Lock()
		u.resources, u.templates = res, tmpl
		u.mu.Unlock()
	}
	if kinds&kindPrompts != 0 && caps.Prompts != nil {
		prompts, err := list("prompts/list", "prompts", "name")
		if err != nil {
			u.log.Warn("listing prompts failed", "error", err)
		}
		u.mu.Lock()
		u.prompts = prompts
		u.mu.Unlock()
	}
	return nil
}

// listAll follows cursors until the upstream has listed every item of a
// list method; key names the result's array, id the field that names an
// item.
func listAll(ctx context.Context, c conn, method, key, id string) ([]Item, error) {
	var out []Item
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, fmt.Errorf("%w: %s did not stop paginating", ErrInvalidResponse, method)
		}
		var params any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		res, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var list map[string]json.RawMessage
		if err := json.Unmarshal(res, &list); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrInvalidResponse, method, err)
		}
		var items []json.RawMessage
		if raw, ok := list[key]; ok && !bytes.Equal(raw, []byte("null")) {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("%w: %s: %s is not an array", ErrInvalidResponse, method, key)
			}
		}
		for _, raw := range items {
			var fields map[string]json.RawMessage
			var name string
			if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(fields[id], &name) != nil || name == "" {
				return nil, fmt.Errorf("%w: %s: an item without %s", ErrInvalidResponse, method, id)
			}
			out = append(out, Item{Name: name, Raw: raw})
		}
		var next string
		if raw, ok := list["nextCursor"]; ok {
			_ = json.Unmarshal(raw, &next)
		}
		if next == "" {
			return out, nil
		}
		cursor = next
	}
}
