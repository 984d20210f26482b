package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// DefaultUpstreamIdle is [PoolOptions].Idle's default: how long an
// owner's upstream instances outlive its last session.
const DefaultUpstreamIdle = 10 * time.Minute

// PoolOptions configures a [Pool].
type PoolOptions struct {
	// Proxy is what every owner's [Proxy] is made with. Its OnChange is
	// not used: see OnChange below.
	Proxy Options
	// OnChange, when not nil, is told that the catalogue of one owner's
	// proxy changed: the server tells that owner's sessions.
	OnChange func(p *Proxy, k Kind)
	// Idle is how long an owner's proxy (its upstream processes and
	// connections) lives on once its last session has ended. 0 means
	// [DefaultUpstreamIdle].
	Idle time.Duration
	// Start is the context upstreams are started with; nil means
	// context.Background().
	Start context.Context
}

// Pool gives every owner (a bearer token's owner) a [Proxy] of its own,
// with its own instances of the upstreams: their processes, connections,
// sessions, server-to-client requests, log messages and credentials never
// reach another owner, because nothing of them is shared. An owner's
// proxy starts with its first session ([Pool.Acquire]) and stops once it
// has had none for [PoolOptions].Idle.
//
// A server configured with shared = true is the exception: one instance
// serves every owner's proxy, and every owner's proxy lists its tools
// (built from its last listing when the proxy is made, rebuilt at each
// of its listings, whose list_changed goes to every owner's sessions). Its requests to clients are refused (no
// owner can be told apart from another), its log messages are dropped,
// its progress goes to the caller that asked for it, and its resource
// updates to the subscribers of each owner.
type Pool struct {
	opts PoolOptions

	mu     sync.Mutex
	owners map[string]*owned
	shared map[string]*upstream.Upstream // by server name
	closed bool

	startShared sync.Once
}

// owned is one owner's proxy and how many sessions hold it.
type owned struct {
	px   *Proxy
	refs int
	idle *time.Timer // running while refs is 0
}

// NewPool returns a pool; nothing starts until the first Acquire.
func NewPool(opts PoolOptions) *Pool {
	if opts.Idle <= 0 {
		opts.Idle = DefaultUpstreamIdle
	}
	if opts.Start == nil {
		opts.Start = context.Background()
	}
	if opts.Proxy.Logger == nil {
		opts.Proxy.Logger = slog.Default()
	}
	pl := &Pool{opts: opts, owners: map[string]*owned{}, shared: map[string]*upstream.Upstream{}}
	for _, sc := range opts.Proxy.Servers {
		if !sc.Shared {
			continue
		}
		var auth upstream.Authorizer
		if opts.Proxy.Authorize != nil {
			auth = opts.Proxy.Authorize("", sc) // no one owner's: the operator's
		}
		pl.shared[sc.Name] = upstream.New(upstream.Options{
			Auth:   auth,
			Server: sc, Logger: opts.Proxy.Logger,
			ClientName: "scratchpad-mcp", ClientVersion: opts.Proxy.Version,
			OnNotify:      pl.sharedNotify,
			OnRequest:     refuseShared,
			OnListChanged: func(*upstream.Upstream) { pl.each((*Proxy).sync) },
			OnRestart: func(u *upstream.Upstream) {
				opts.Proxy.Telemetry.UpstreamRestarted(context.Background(), u.Name())
			},
		})
	}
	return pl
}

// Acquire returns owner's proxy, making and starting it if it has none,
// and holds it until release is called (once per Acquire; later calls
// do nothing). A session acquires its owner's proxy when it starts and
// releases it when it ends.
func (pl *Pool) Acquire(owner string) (p *Proxy, release func()) {
	pl.startShared.Do(func() {
		for _, u := range pl.shared {
			u.Start(pl.opts.Start, DefaultOffer())
		}
	})
	pl.mu.Lock()
	o := pl.owners[owner]
	fresh := o == nil
	if fresh {
		opts := pl.opts.Proxy
		opts.shared = pl.shared
		opts.Logger = opts.Logger.With("owner", owner)
		opts.Owner = owner
		o = &owned{}
		onChange := pl.opts.OnChange
		opts.OnChange = func(k Kind) {
			if onChange != nil {
				onChange(o.px, k)
			}
		}
		o.px = New(opts)
		if !pl.closed {
			pl.owners[owner] = o
		}
	}
	o.refs++
	if o.idle != nil {
		o.idle.Stop()
		o.idle = nil
	}
	closed := pl.closed
	pl.mu.Unlock()
	if closed {
		o.px.Close()
		return o.px, func() {}
	}
	if fresh {
		// The shared upstreams may have listed before this proxy was
		// registered (and so before [Pool.each] could reach it): build
		// its catalogue from their listings now. A listing after the
		// registration above reaches it through each. No session holds
		// it yet, so there is no one to tell.
		o.px.cat.rebuild(o.px.ups, o.px.log)
	}
	o.px.Start(pl.opts.Start, nil)
	var once sync.Once
	return o.px, func() { once.Do(func() { pl.release(owner, o) }) }
}

func (pl *Pool) release(owner string, o *owned) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if o.refs--; o.refs > 0 || pl.closed {
		return
	}
	o.idle = time.AfterFunc(pl.opts.Idle, func() {
		pl.mu.Lock()
		if o.refs > 0 || pl.owners[owner] != o {
			pl.mu.Unlock()
			return
		}
		delete(pl.owners, owner)
		pl.mu.Unlock()
		pl.opts.Proxy.Logger.Info("owner's upstreams stopped: no session for a while", "owner", owner, "idle", pl.opts.Idle)
		o.px.Close()
	})
}

// Owners is how many owners have upstreams running (held or idle).
func (pl *Pool) Owners() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return len(pl.owners)
}

// Close stops every owner's upstreams and the shared ones; an Acquire
// after it gets a stopped proxy.
func (pl *Pool) Close() {
	pl.mu.Lock()
	pl.closed = true
	owners := pl.owners
	pl.owners = map[string]*owned{}
	for _, o := range owners {
		if o.idle != nil {
			o.idle.Stop()
		}
	}
	pl.mu.Unlock()
	pl.startShared.Do(func() {})
	var wg sync.WaitGroup
	for _, o := range owners {
		wg.Add(1)
		go func() { defer wg.Done(); o.px.Close() }()
	}
	for _, u := range pl.shared {
		wg.Add(1)
		go func() { defer wg.Done(); u.Close() }()
	}
	wg.Wait()
}

// each runs f on every owner's proxy.
func (pl *Pool) each(f func(*Proxy)) {
	pl.mu.Lock()
	list := make([]*Proxy, 0, len(pl.owners))
	for _, o := range pl.owners {
		list = append(list, o.px)
	}
	pl.mu.Unlock()
	for _, p := range list {
		f(p)
	}
}

// sharedNotify delivers what a shared upstream sends on its own: progress
// to the one proxy that knows its token (tokens are unique across
// proxies), resource updates to each owner's subscribers. Log messages
// are dropped: they could be about any owner's call.
func (pl *Pool) sharedNotify(u *upstream.Upstream, method string, params json.RawMessage) {
	switch method {
	case "notifications/progress":
		pl.each(func(p *Proxy) { p.forwardProgress(params) })
	case "notifications/resources/updated":
		pl.each(func(p *Proxy) { p.onNotify(u, method, params) })
	case "notifications/message":
		pl.opts.Proxy.Logger.Debug("log message of a shared upstream dropped: it is not any one owner's", "server", u.Name())
	}
}

// refuseShared answers a shared upstream's request to a client.
func refuseShared(_ context.Context, u *upstream.Upstream, method string, _ json.RawMessage) (json.RawMessage, error) {
	return nil, &upstream.RPCError{Code: codeInternal, Message: fmt.Sprintf("%s: server %q is shared by every owner of this scratchpad-mcp (shared = true), so its requests to clients are refused: no client can be told apart as the one it is for", method, u.Name())}
}
