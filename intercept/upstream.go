package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// Upstream is one configured MCP server. It connects in the background,
// restarts a connection that dies with exponential backoff, and keeps the
// server's last tool listing as raw JSON.
//
// Calls made while it is (re)connecting wait until it is ready or their
// context ends; calls in flight when it dies fail with [ErrUpstreamExited].
type Upstream struct {
	cfg  config.Server
	log  *slog.Logger
	h    handlers
	info clientInfo

	// onTools is called (off the read loop) after every successful listing
	// of tools, resources, templates or prompts.
	onTools func(*Upstream)

	// offer is the client capabilities sent at initialize; set before
	// start.
	offer map[string]any

	mu        sync.Mutex
	c         conn
	ready     chan struct{} // closed while c is usable; replaced when c dies
	tools     []rawTool
	resources []rawItem
	templates []rawItem
	prompts   []rawItem
	caps      capabilities
	initRes   json.RawMessage // the upstream's initialize result
	state     string
	lastErr   error
	logLevel  string // forwarded with logging/setLevel on every (re)connect

	refresh chan struct{} // list_changed received: re-list what is dirty
	dirty   listKind
	stop    context.CancelFunc
	stopped chan struct{}
}

type clientInfo struct {
	name, version string
}

// rawItem is a tool, resource, resource template or prompt exactly as the
// upstream listed it. Name is its key: the tool or prompt name, the
// resource URI, the template's uriTemplate.
type rawItem struct {
	Name string
	Raw  json.RawMessage // the whole object
}

// rawTool is a tool exactly as the upstream listed it.
type rawTool = rawItem

// listKind says which listings a list_changed notification made stale.
type listKind uint8

const (
	kindTools listKind = 1 << iota
	kindResources
	kindPrompts
)

// capabilities is what the proxy needs from an upstream's initialize
// result: what it may be asked.
type capabilities struct {
	Tools     *struct{} `json:"tools"`
	Resources *struct {
		Subscribe bool `json:"subscribe"`
	} `json:"resources"`
	Prompts     *struct{} `json:"prompts"`
	Logging     *struct{} `json:"logging"`
	Completions *struct{} `json:"completions"`
}

// Upstream states, as reported by [Upstream.State].
const (
	StateConnecting = "connecting"
	StateReady      = "ready"
	StateRestarting = "restarting"
	StateFailed     = "failed"
	StateStopped    = "stopped"
)

func newUpstream(cfg config.Server, log *slog.Logger, info clientInfo) *Upstream {
	return &Upstream{
		cfg:     cfg,
		log:     log.With("server", cfg.Name),
		info:    info,
		ready:   make(chan struct{}),
		state:   StateConnecting,
		refresh: make(chan struct{}, 1),
		stopped: make(chan struct{}),
	}
}

// Name is the server's name from the config.
func (u *Upstream) Name() string { return u.cfg.Name }

// Config is the server's configuration.
func (u *Upstream) Config() *config.Server { return &u.cfg }

// State reports the connection state and, when not ready, the last error.
func (u *Upstream) State() (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state, u.lastErr
}

// InitializeResult is the upstream's raw initialize result (nil before the
// first connection).
func (u *Upstream) InitializeResult() json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.initRes
}

func (u *Upstream) toolList() []rawTool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.tools
}

// lists returns the last resource, template and prompt listings.
func (u *Upstream) lists() (resources, templates, prompts []rawItem) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.resources, u.templates, u.prompts
}

func (u *Upstream) capabilities() capabilities {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.caps
}

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

// setLogLevel remembers level for every future connection and sends it
// now when connected to an upstream that logs.
func (u *Upstream) setLogLevel(ctx context.Context, level string) {
	u.mu.Lock()
	u.logLevel = level
	c, logs := u.c, u.caps.Logging != nil
	u.mu.Unlock()
	if c == nil || !logs {
		return
	}
	if _, err := c.Call(ctx, "logging/setLevel", map[string]any{"level": level}); err != nil {
		u.log.Warn("forwarding logging/setLevel failed", "level", level, "error", err)
	}
}

// start runs the supervisor until ctx ends or [Upstream.close].
func (u *Upstream) start(ctx context.Context) {
	ctx, u.stop = context.WithCancel(ctx)
	go u.supervise(ctx)
}

func (u *Upstream) close() {
	if u.stop != nil {
		u.stop()
		<-u.stopped
	}
}

func (u *Upstream) setState(s string, err error) {
	u.mu.Lock()
	u.state, u.lastErr = s, err
	u.mu.Unlock()
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

func (u *Upstream) supervise(ctx context.Context) {
	defer close(u.stopped)
	failures := 0
	for {
		c, err := u.connect(ctx)
		if err == nil {
			failures = 0
			u.log.Info("upstream ready", "tools", len(u.toolList()))
			err = u.serve(ctx, c)
			_ = c.Close()
			if ctx.Err() != nil {
				u.setState(StateStopped, nil)
				return
			}
			u.log.Warn("upstream connection lost", "error", err)
		} else if ctx.Err() != nil {
			u.setState(StateStopped, nil)
			return
		} else {
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
		select {
		case <-ctx.Done():
			u.setState(StateStopped, nil)
			return
		case <-time.After(wait):
		}
	}
}

// serve publishes c as the live connection until it dies or ctx ends, and
// re-lists tools whenever the upstream says they changed.
func (u *Upstream) serve(ctx context.Context, c conn) error {
	u.mu.Lock()
	u.c = c
	u.state, u.lastErr = StateReady, nil
	close(u.ready)
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.c = nil
		u.ready = make(chan struct{})
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
			if u.onTools != nil {
				u.onTools(u)
			}
		}
	}
}

// connect starts the transport, runs the MCP handshake and lists tools.
func (u *Upstream) connect(ctx context.Context) (conn, error) {
	h := u.h
	userNotify := h.notify
	h.notify = func(method string, params json.RawMessage) {
		// Never re-list from here: the reply would arrive on the read
		// loop this handler may be holding. Signal the supervisor.
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
	var c conn
	var err error
	switch u.cfg.Transport {
	case config.TransportStdio, "":
		argv := append(append([]string{}, u.cfg.Cmd...), u.cfg.Args...)
		c, err = startStdio(u.cfg.Name, argv, u.cfg.Env, u.cfg.Cwd, h, u.log)
	default:
		c, err = dialRemote(ctx, u.cfg.Timeout, u.cfg.Name, u.cfg.Transport, u.cfg.URL, u.cfg.Headers, h, u.log)
	}
	if err != nil {
		return nil, err
	}
	offer := u.offer
	if offer == nil {
		offer = defaultOffer()
	}
	hctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
	defer cancel()
	initRes, err := c.Call(hctx, "initialize", map[string]any{
		"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		"capabilities":    offer,
		"clientInfo":      map[string]any{"name": u.info.name, "version": u.info.version},
	})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.Notify(hctx, "notifications/initialized", nil); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialized notification: %w", err)
	}
	var init struct {
		Capabilities capabilities `json:"capabilities"`
	}
	if err := json.Unmarshal(initRes, &init); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w: initialize: %v", ErrInvalidResponse, err)
	}
	u.mu.Lock()
	u.initRes = initRes
	u.caps = init.Capabilities
	level := u.logLevel
	u.mu.Unlock()
	if err := u.relist(ctx, c, kindTools|kindResources|kindPrompts); err != nil {
		_ = c.Close()
		return nil, err
	}
	if level != "" && init.Capabilities.Logging != nil {
		sctx, cancel := context.WithTimeout(ctx, u.cfg.Timeout)
		_, err := c.Call(sctx, "logging/setLevel", map[string]any{"level": level})
		cancel()
		if err != nil {
			u.log.Warn("forwarding logging/setLevel failed", "level", level, "error", err)
		}
	}
	if u.onTools != nil {
		u.onTools(u)
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
	caps := u.capabilities()
	list := func(method, key, id string) ([]rawItem, error) {
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

// listTools follows cursors until the upstream has listed every tool.
func listTools(ctx context.Context, c conn) ([]rawTool, error) {
	return listAll(ctx, c, "tools/list", "tools", "name")
}

// listAll follows cursors until the upstream has listed every item of a
// list method; key names the result's array, id the field that names an
// item.
func listAll(ctx context.Context, c conn, method, key, id string) ([]rawItem, error) {
	var out []rawItem
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
			out = append(out, rawItem{Name: name, Raw: raw})
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

// call waits for the upstream to be ready, then sends one request. The
// caller's ctx bounds both the wait and the call.
func (u *Upstream) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	for {
		u.mu.Lock()
		c, ready, state, lastErr := u.c, u.ready, u.state, u.lastErr
		u.mu.Unlock()
		if c != nil {
			select {
			case <-c.Done():
				// Dead but not yet replaced by the supervisor: wait for
				// the restart rather than fail on a connection known gone.
				select {
				case <-time.After(10 * time.Millisecond):
					continue
				case <-ctx.Done():
					return nil, fmt.Errorf("%w: upstream %q is restarting", ErrUpstreamUnavailable, u.cfg.Name)
				}
			default:
			}
			res, err := c.Call(ctx, method, params)
			if errors.Is(err, ErrUpstreamExited) {
				return nil, fmt.Errorf("upstream %q exited during the call: %w", u.cfg.Name, err)
			}
			return res, err
		}
		if state == StateFailed || state == StateStopped {
			return nil, fmt.Errorf("%w: upstream %q is %s: %v", ErrUpstreamUnavailable, u.cfg.Name, state, lastErr)
		}
		select {
		case <-ready:
		case <-ctx.Done():
			if lastErr != nil {
				return nil, fmt.Errorf("%w: upstream %q is %s (last error: %v)", ErrUpstreamUnavailable, u.cfg.Name, state, lastErr)
			}
			return nil, fmt.Errorf("%w: upstream %q is %s", ErrUpstreamUnavailable, u.cfg.Name, state)
		}
	}
}

// notify sends a notification if connected; otherwise it is dropped.
func (u *Upstream) notify(ctx context.Context, method string, params any) {
	u.mu.Lock()
	c := u.c
	u.mu.Unlock()
	if c != nil {
		_ = c.Notify(ctx, method, params)
	}
}
