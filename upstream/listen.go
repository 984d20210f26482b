package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"
)

// A 2026-07-28 upstream has no session to send list_changed on: the client
// opens subscriptions/listen, one long request whose answer stream (an SSE
// POST; interleaved lines over stdio) carries the notifications it opted
// into, the first being notifications/subscriptions/acknowledged with the
// subset the server honours. Its list_changed notifications reach the same
// re-listing as a 2025 upstream's; resources/updated reaches OnNotify.

const (
	// listenMinBackoff and listenMaxBackoff bound the wait before a
	// listen stream that ended is opened again.
	listenMinBackoff = 250 * time.Millisecond
	listenMaxBackoff = 30 * time.Second
	// listenSwap bounds waiting for a new listen's acknowledgement before
	// the old one is closed (the subscriptions changed).
	listenSwap = 2 * time.Second
)

// errCancelledByUpstream ends a call the upstream cancelled
// (notifications/cancelled naming our request: how a server ends a stdio
// listen).
var errCancelledByUpstream = errors.New("the upstream cancelled the request")

// covered reports whether the live subscriptions/listen stream tells
// when listing k changes, so its ttl need not be watched; u.mu is held.
func (u *Upstream) covered(k ListKind) bool { return u.listening&k != 0 }

// listenChanged wakes the listen loop: the resource subscriptions changed.
func (u *Upstream) listenChanged() {
	select {
	case u.listenWake <- struct{}{}:
	default:
	}
}

// listenFilter is subscriptions/listen's notifications member.
type listenFilter struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

func (f listenFilter) kinds() ListKind {
	var k ListKind
	if f.Tools {
		k |= KindTools
	}
	if f.Resources {
		k |= KindResources
	}
	if f.Prompts {
		k |= KindPrompts
	}
	return k
}

// listenOffer is what the upstream's capabilities let us listen for: the
// list kinds it declares listChanged for, and the subscribed URIs when it
// declares resources.subscribe.
func (u *Upstream) listenOffer() (f listenFilter, ok bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var init struct {
		Capabilities struct {
			Tools     *struct{ ListChanged bool }
			Prompts   *struct{ ListChanged bool }
			Resources *struct{ ListChanged, Subscribe bool }
		}
	}
	if json.Unmarshal(u.initRes, &init) != nil {
		return f, false
	}
	caps := init.Capabilities
	f.Tools = caps.Tools != nil && caps.Tools.ListChanged
	f.Prompts = caps.Prompts != nil && caps.Prompts.ListChanged
	f.Resources = caps.Resources != nil && caps.Resources.ListChanged
	subscribe := caps.Resources != nil && caps.Resources.Subscribe
	if subscribe {
		for uri := range u.subs {
			f.URIs = append(f.URIs, uri)
		}
		slices.Sort(f.URIs)
	}
	return f, f.Tools || f.Prompts || f.Resources || subscribe
}

// acknowledged records the subset a listen stream's first notification
// says the upstream honours.
func (u *Upstream) acknowledged(params json.RawMessage) {
	var p struct {
		Notifications listenFilter `json:"notifications"`
	}
	_ = json.Unmarshal(params, &p)
	u.mu.Lock()
	u.listening = p.Notifications.kinds()
	u.signalLocked()
	u.mu.Unlock()
	select {
	case u.acked <- struct{}{}:
	default:
	}
}

// startListen runs [Upstream.listen] on c when the upstream declares
// something to listen for, and waits (at most the server's timeout) for
// its acknowledgement. stop ends it and waits for it.
func (u *Upstream) startListen(ctx context.Context, c conn) (stop func()) {
	if _, ok := u.listenOffer(); !ok {
		return func() {}
	}
	select {
	case <-u.acked: // a stale one, of the last connection
	default:
	}
	lctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); u.listen(lctx, c) }()
	t := time.NewTimer(u.cfg.Timeout)
	defer t.Stop()
	select {
	case <-u.acked:
	case <-t.C:
		u.log.Warn("upstream did not acknowledge subscriptions/listen; list changes rely on ttlMs until it does")
	case <-c.Done():
	case <-ctx.Done():
	}
	return func() { cancel(); <-done }
}

// listen keeps a subscriptions/listen open on c, a 2026-07-28 connection,
// until ctx ends: re-opened with backoff when it ends, replaced (the new
// one first) when the resource subscriptions change.
func (u *Upstream) listen(ctx context.Context, c conn) {
	backoff := listenMinBackoff
	var cancelOld context.CancelFunc
	ended := make(chan error, 1)
	open := func() bool {
		f, ok := u.listenOffer()
		if !ok {
			// Nothing left to listen for (the last subscription went).
			if cancelOld != nil {
				cancelOld()
				cancelOld = nil
			}
			u.mu.Lock()
			u.listening = 0
			u.mu.Unlock()
			return false
		}
		select {
		case <-u.acked: // an earlier stream's: not the one awaited below
		default:
		}
		lctx, cancel := context.WithCancel(ctx)
		go func() {
			_, err := c.Call(lctx, "subscriptions/listen", map[string]any{"notifications": f})
			if lctx.Err() == nil {
				ended <- err
			}
		}()
		if cancelOld != nil {
			// The old stream stays until the new one is acknowledged, so
			// no change falls between the two.
			t := time.NewTimer(listenSwap)
			select {
			case <-u.acked:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			cancelOld()
		}
		cancelOld = cancel
		return true
	}
	defer func() {
		if cancelOld != nil {
			cancelOld()
		}
		u.mu.Lock()
		u.listening = 0
		u.mu.Unlock()
	}()
	open()
	began := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.listenWake:
			if open() {
				began = time.Now()
			}
		case err := <-ended:
			u.mu.Lock()
			u.listening = 0
			u.mu.Unlock()
			if time.Since(began) > listenMaxBackoff {
				backoff = listenMinBackoff // it lived: not a failing server
			}
			u.log.Debug("upstream's subscriptions/listen ended; reopening", "error", err, "in", backoff.String())
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, listenMaxBackoff)
			if open() {
				began = time.Now()
				// What changed while no stream was open is re-listed.
				f, _ := u.listenOffer()
				u.markDirty(f.kinds())
			}
		}
	}
}
