package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// subscriptions/listen is 2026-07-28's replacement for a session's GET
// stream: one long request whose answer is a stream of the notifications
// the client opted in to — list changes, updates of the resources it
// names — each tagged with the listen request's id, acknowledged first,
// ended by the client closing it (or cancelling it over stdio) or by the
// server's end, which answers it.

// listenFilter is what a listen asked for and what is honoured of it.
type listenFilter struct {
	Tools     bool     `json:"toolsListChanged,omitempty"`
	Prompts   bool     `json:"promptsListChanged,omitempty"`
	Resources bool     `json:"resourcesListChanged,omitempty"`
	URIs      []string `json:"resourceSubscriptions,omitempty"`
}

// listener is one open listen: a [proxy.Session] for the resources it
// subscribed to upstream, fed by [Server.Changed] and resource updates,
// written by its own loop so that a client that stops reading holds no
// one else (pending changes are coalesced, updates bounded).
type listener struct {
	id    string // the proxy's name for it
	subID json.RawMessage
	ag    *agent20260728
	want  listenFilter

	mu      sync.Mutex
	pending proxy.Kind
	updated []string // URIs updated since the last write, at most maxPendingUpdates
	wake    chan struct{}
	ended   chan struct{} // closed by end: the server drains
	endOnce sync.Once
}

// end answers the listen (the server is draining).
func (l *listener) end() { l.endOnce.Do(func() { close(l.ended) }) }

// Bounds of listens: per owner and in all, and the resource updates one
// listen may have waiting.
const (
	maxListensPerOwner = 64
	maxListens         = 1024
	maxPendingUpdates  = 256
	listenKeepAlive    = 15 * time.Second
)

// errTooManyListens refuses a listen past a bound.
var errTooManyListens = errors.New("too many open subscriptions/listen requests")

var listenSeq atomic.Uint64

func (s *Server) listen20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p struct {
		Notifications *listenFilter `json:"notifications"`
	}
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	if p.Notifications == nil {
		return nil, wire.InvalidParams("subscriptions/listen: params.notifications is required")
	}
	if len(p.Notifications.URIs) > maxPendingUpdates {
		return nil, wire.InvalidParams("subscriptions/listen: at most %d resourceSubscriptions", maxPendingUpdates)
	}
	r.ag.px.AwaitStarted(ctx, 0)
	caps := capabilities(r.ag.own, r.ag.px)
	got := listenFilter{Tools: p.Notifications.Tools}
	if caps.Prompts != nil {
		got.Prompts = p.Notifications.Prompts
	}
	if caps.Resources != nil {
		got.Resources = p.Notifications.Resources
		if caps.Resources.Subscribe {
			got.URIs = p.Notifications.URIs
		}
	}
	l := &listener{id: "l/" + strconv.FormatUint(listenSeq.Add(1), 10), subID: r.id, ag: r.ag, want: got, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	if err := s.addListener(l); err != nil {
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: err.Error(), Status: 429}
	}
	defer s.removeListener(l)

	meta := map[string]json.RawMessage{wire.MetaSubscriptionID: r.id}
	ack, _ := json.Marshal(map[string]any{"_meta": meta, "notifications": got})
	if err := r.out.notify("notifications/subscriptions/acknowledged", ack); err != nil {
		return nil, err
	}
	// Subscriptions: own resources are watched, the others forwarded.
	var stops []func()
	if len(got.URIs) > 0 {
		r.ag.px.Attach(l)
		defer r.ag.px.Detach(l.id)
	}
	for _, uri := range got.URIs {
		if _, own := r.ag.resources[uri]; own {
			if r.ag.own.Watch != nil {
				stops = append(stops, r.ag.own.Watch(ctx, uri, func() { l.updatedURI(uri) }))
			}
			continue
		}
		r.ag.px.Subscribe(ctx, l, uri)
		defer r.ag.px.Unsubscribe(context.WithoutCancel(ctx), l, uri)
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	keep := time.NewTicker(listenKeepAlive)
	defer keep.Stop()
	ka, _ := r.out.(interface{ keepAlive() error })
	for {
		select {
		case <-l.ended:
			return json.Marshal(map[string]any{"_meta": meta})
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), ErrSessionEnded) {
				// The server's end: the listen is answered, gracefully.
				return json.Marshal(map[string]any{"_meta": meta})
			}
			return nil, context.Cause(ctx)
		case <-keep.C:
			if ka != nil {
				if err := ka.keepAlive(); err != nil {
					return nil, err
				}
			}
		case <-l.wake:
			if err := l.flush(r.out); err != nil {
				return nil, err
			}
		}
	}
}

// flush writes what changed since the last write.
func (l *listener) flush(out responder) error {
	l.mu.Lock()
	kinds, uris := l.pending, l.updated
	l.pending, l.updated = 0, nil
	l.mu.Unlock()
	meta := map[string]json.RawMessage{wire.MetaSubscriptionID: l.subID}
	tagged, _ := json.Marshal(map[string]any{"_meta": meta})
	for _, k := range []struct {
		kind   proxy.Kind
		want   bool
		method string
	}{
		{proxy.KindTools, l.want.Tools, "notifications/tools/list_changed"},
		{proxy.KindPrompts, l.want.Prompts, "notifications/prompts/list_changed"},
		{proxy.KindResources, l.want.Resources, "notifications/resources/list_changed"},
	} {
		if kinds&k.kind != 0 && k.want {
			if err := out.notify(k.method, tagged); err != nil {
				return err
			}
		}
	}
	for _, uri := range uris {
		params, _ := json.Marshal(map[string]any{"uri": uri, "_meta": meta})
		if err := out.notify("notifications/resources/updated", params); err != nil {
			return err
		}
	}
	return nil
}

func (l *listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// changed notes a change of kind for the listen's loop.
func (l *listener) changed(kind proxy.Kind) {
	l.mu.Lock()
	l.pending |= kind
	l.mu.Unlock()
	l.signal()
}

// updatedURI notes an update of a subscribed resource (dropped past the
// bound: the client is behind, and will read the resource anyway).
func (l *listener) updatedURI(uri string) {
	l.mu.Lock()
	if len(l.updated) < maxPendingUpdates {
		l.updated = append(l.updated, uri)
	}
	l.mu.Unlock()
	l.signal()
}

// ID implements [proxy.Session].
func (l *listener) ID() string { return l.id }

// Capabilities implements [proxy.Session]: a listen can be asked nothing.
func (l *listener) Capabilities() proxy.ClientCapabilities { return proxy.ClientCapabilities{} }

// Request implements [proxy.Session].
func (l *listener) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errCannotAsk
}

// Notify implements [proxy.Session]: resource updates of its
// subscriptions; nothing else goes on a listen.
func (l *listener) Notify(_ context.Context, method string, params json.RawMessage) error {
	if method != "notifications/resources/updated" {
		return nil
	}
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return err
	}
	l.updatedURI(p.URI)
	return nil
}

// addListener counts l in, or says which bound refuses it.
func (s *Server) addListener(l *listener) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if s.listeners == nil {
		s.listeners = map[*listener]bool{}
		s.listensPerOwner = map[string]int{}
	}
	if len(s.listeners) >= maxListens {
		return fmt.Errorf("%w: the server holds its limit of %d", errTooManyListens, maxListens)
	}
	if s.listensPerOwner[l.ag.owner] >= maxListensPerOwner {
		return fmt.Errorf("%w: this owner holds its limit of %d; close one", errTooManyListens, maxListensPerOwner)
	}
	s.listeners[l] = true
	s.listensPerOwner[l.ag.owner]++
	return nil
}

func (s *Server) removeListener(l *listener) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	if !s.listeners[l] {
		return
	}
	delete(s.listeners, l)
	if s.listensPerOwner[l.ag.owner]--; s.listensPerOwner[l.ag.owner] <= 0 {
		delete(s.listensPerOwner, l.ag.owner)
	}
}

// endListensOf answers the open listens of agent ag.
func (s *Server) endListensOf(ag *agent20260728) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	for l := range s.listeners {
		if l.ag == ag {
			l.end()
		}
	}
}

// changedListeners tells the listens whose agent forwards to p that the
// items of kind changed: only p's owner's, as sessions are.
func (s *Server) changedListeners(p *proxy.Proxy, kind proxy.Kind) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	for l := range s.listeners {
		if l.ag.px == p {
			l.changed(kind)
		}
	}
}
