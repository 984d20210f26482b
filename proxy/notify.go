package proxy

import (
	"context"
	"encoding/json"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// onNotify handles notifications an upstream sends on its own. List
// changes are handled by the upstream itself (it re-lists, then the
// catalogue syncs and [Options.OnChange] tells the server).
func (p *Proxy) onNotify(u *upstream.Upstream, method string, params json.RawMessage) {
	// The redact stage: what a notification says reaches no client
	// unmasked (mask.go).
	params, ok := p.mask(u.Config(), method, params)
	if !ok {
		return
	}
	switch method {
	case "notifications/progress":
		p.forwardProgress(params)
	case "notifications/message":
		var n map[string]any
		if json.Unmarshal(params, &n) != nil || n == nil {
			p.log.Warn("upstream sent notifications/message without an object; dropped", "server", u.Name())
			return
		}
		if n["logger"] == nil {
			n["logger"] = u.Name()
		}
		b, _ := json.Marshal(n)
		// Each session filters by the level it asked for; a 2025
		// upstream's log names no request, so a 2026-07-28 request in
		// flight on it gets it on its answer when it asked for logs at
		// that level (its session filters too). All are this owner's: a
		// shared upstream's logs never come here (pool.go).
		for _, s := range p.sessions.list() {
			_ = s.Notify(context.Background(), method, b)
		}
		for _, c := range p.sessions.unattached(u) {
			_ = c.sess.Notify(c.ctx, method, b)
		}
	case "notifications/elicitation/complete":
		var n struct {
			ElicitationID string `json:"elicitationId"`
		}
		_ = json.Unmarshal(params, &n)
		if sid, ok := p.sessions.completed(n.ElicitationID); ok {
			if s := p.sessions.get(sid); s != nil {
				_ = s.Notify(context.Background(), method, params)
			}
		}
	case "notifications/resources/updated":
		var n map[string]any
		if json.Unmarshal(params, &n) != nil {
			return
		}
		uri, _ := n["uri"].(string)
		if uri == "" {
			return
		}
		exposed := p.cat.exposedURI(u, uri)
		n["uri"] = exposed
		b, _ := json.Marshal(n)
		for _, s := range p.sessions.subscribers(exposed) {
			_ = s.Notify(context.Background(), method, b)
		}
	}
}
