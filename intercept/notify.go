package intercept

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// onNotify handles notifications an upstream sends on its own. List
// changes are handled by the upstream itself (it re-lists, then the
// catalogue syncs and the server tells clients).
func (r *Router) onNotify(u *Upstream, method string, params json.RawMessage) {
	r.mu.RLock()
	srv := r.srv
	r.mu.RUnlock()
	if srv == nil {
		return
	}
	switch method {
	case "notifications/progress":
		if p := decode(params); p != nil {
			r.forwardProgress(p)
		}
	case "notifications/message":
		p := decode(params)
		if p == nil {
			r.log.Warn("upstream sent notifications/message without an object; dropped", "server", u.Config().Name)
			return
		}
		if p["logger"] == nil {
			p["logger"] = u.Config().Name
		}
		level, _ := p["level"].(string)
		for _, id := range r.sess.logTargets(mcp.LoggingLevel(level)) {
			r.notify(srv, id, method, p)
		}
	case "notifications/elicitation/complete":
		p := decode(params)
		id, _ := p["elicitationId"].(string)
		if sid, ok := r.sess.completed(id); ok {
			_ = srv.SendNotificationToSpecificClient(sid, method, p)
		}
	case "notifications/resources/updated":
		p := decode(params)
		uri, _ := p["uri"].(string)
		if uri == "" {
			return
		}
		exposed := r.cat.exposedURI(u, uri)
		p["uri"] = exposed
		for _, id := range r.sess.subscribers(exposed) {
			_ = srv.SendNotificationToSpecificClient(id, method, p)
		}
	}
}

// addHooks tracks sessions, forwards logging/setLevel to every upstream
// and resource subscriptions to the owning one, and hides resource
// templates an upstream no longer lists (mcp-go cannot delete them).
func (r *Router) addHooks(h *server.Hooks) {
	h.AddOnRegisterSession(func(ctx context.Context, s server.ClientSession) {
		r.sess.add(s)
	})
	h.AddOnUnregisterSession(func(ctx context.Context, s server.ClientSession) {
		// Off the hook: mcp-go waits for it, and an upstream may be slow.
		if orphaned := r.sess.remove(s.SessionID()); len(orphaned) > 0 {
			go func() {
				for _, uri := range orphaned {
					r.forwardSubscription(context.Background(), "resources/unsubscribe", uri)
				}
			}()
		}
	})
	h.AddAfterSetLevel(func(ctx context.Context, id any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		cs := server.ClientSessionFromContext(ctx)
		if cs == nil {
			return
		}
		// In parallel, but before the client's setLevel is answered: what
		// it does next is logged at the new level.
		level := r.sess.setLevel(cs.SessionID(), req.Params.Level)
		var wg sync.WaitGroup
		for _, u := range r.ups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.Config().Timeout)
				defer cancel()
				u.SetLogLevel(lctx, string(level))
			}()
		}
		wg.Wait()
	})
	h.AddBeforeSubscribe(func(ctx context.Context, id any, req *mcp.SubscribeRequest) {
		cs := server.ClientSessionFromContext(ctx)
		if cs == nil || req.Params.URI == "" {
			return
		}
		if r.sess.subscribe(req.Params.URI, cs.SessionID()) {
			r.forwardSubscription(ctx, "resources/subscribe", req.Params.URI)
		}
	})
	h.AddBeforeUnsubscribe(func(ctx context.Context, id any, req *mcp.UnsubscribeRequest) {
		cs := server.ClientSessionFromContext(ctx)
		if cs == nil || req.Params.URI == "" {
			return
		}
		if r.sess.unsubscribe(req.Params.URI, cs.SessionID()) {
			r.forwardSubscription(ctx, "resources/unsubscribe", req.Params.URI)
		}
	})
	h.AddAfterListResourceTemplates(func(ctx context.Context, id any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		if res == nil {
			return
		}
		kept := res.ResourceTemplates[:0]
		for _, t := range res.ResourceTemplates {
			if t.URITemplate == nil || !r.cat.staleTemplate(t.URITemplate.Raw()) && t.URITemplate.Raw() != catchAllTemplate {
				kept = append(kept, t)
			}
		}
		res.ResourceTemplates = kept
	})
}

// onRootsChanged tells every upstream that a client's roots changed:
// the upstream asks again (roots/list), and the request goes to whichever
// client has a call in flight on it.
func (r *Router) onRootsChanged(ctx context.Context, n mcp.JSONRPCNotification) {
	for _, u := range r.ups {
		_ = u.Notify(context.WithoutCancel(ctx), n.Method, nil)
	}
}

// forwardSubscription tells the upstream owning an exposed URI that the
// first client subscribed, or the last one left. mcp-go's subscribe
// handler cannot fail from a hook, so an upstream error is logged.
func (r *Router) forwardSubscription(ctx context.Context, method, exposed string) {
	u, orig, ok := r.resourceOwner(exposed)
	if !ok {
		return
	}
	if caps := u.Capabilities(); caps.Resources == nil || !caps.Resources.Subscribe {
		r.log.Debug("upstream does not support resource subscriptions", "server", u.Config().Name, "uri", orig)
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.Config().Timeout)
	defer cancel()
	if _, err := u.Call(cctx, method, map[string]any{"uri": orig}); err != nil {
		r.log.Warn("forwarding "+method+" failed", "server", u.Config().Name, "uri", orig, "error", err)
	}
}
