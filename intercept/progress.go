package intercept

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// forwardMeta copies the caller's _meta for the upstream, replacing the
// progress token with one unique across all callers and remembering where
// progress for it must go.
func (r *Router) forwardMeta(ctx context.Context, m *mcp.Meta) map[string]any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m.AdditionalFields {
		out[k] = v
	}
	if m.ProgressToken != nil {
		tok := "sp-" + strconv.FormatInt(r.progressSeq.Add(1), 10)
		r.progressMu.Lock()
		r.progress[tok] = &progressRoute{ctx: ctx, token: m.ProgressToken}
		r.progressMu.Unlock()
		out["progressToken"] = tok
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (r *Router) progressFor(tok string) *progressRoute {
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	return r.progress[tok]
}

// forgetProgress drops a progress route shortly after its call ended:
// transports other than stdio may deliver the last notifications after
// the response.
func (r *Router) forgetProgress(tok string) {
	time.AfterFunc(2*time.Second, func() { r.dropProgress(tok) })
}

func (r *Router) dropProgress(tok string) {
	r.progressMu.Lock()
	delete(r.progress, tok)
	r.progressMu.Unlock()
}

// forwardProgress sends an upstream's notifications/progress to the caller
// under the caller's own token.
func (r *Router) forwardProgress(p map[string]any) {
	tok, _ := p["progressToken"].(string)
	pr := r.progressFor(tok)
	if pr == nil {
		return
	}
	p["progressToken"] = pr.token
	pr.mu.Lock()
	if v, ok := p["progress"].(float64); ok && v > pr.last {
		pr.last = v
	}
	pr.mu.Unlock()
	r.sendProgress(pr, p)
}

func (r *Router) sendProgress(pr *progressRoute, p map[string]any) {
	r.mu.RLock()
	srv := r.srv
	r.mu.RUnlock()
	if srv == nil {
		return
	}
	cs := server.ClientSessionFromContext(pr.ctx)
	if cs != nil && r.notifyDirect(cs.SessionID(), "notifications/progress", p) {
		return
	}
	// Through the caller's own request (its stream, over streamable HTTP).
	if cs != nil {
		r.notes.add(cs.SessionID(), 1)
	}
	if err := srv.SendNotificationToClient(pr.ctx, "notifications/progress", p); err != nil {
		if cs != nil {
			r.notes.add(cs.SessionID(), -1)
		}
		r.log.Debug("forwarding progress failed", "error", err)
	}
}

// divertProgress tells a caller that asked for progress what diverting
// its output is doing, once it has taken longer than
// [Options.ProgressDelay]: counting a 100 MB output or writing it can take
// seconds, and a silent call looks hung. Its progress values continue
// from the upstream's last one, so they keep increasing.
type divertProgress struct {
	pr   *progressRoute
	send func(p map[string]any)

	mu      sync.Mutex
	current string
	due     bool // the delay has passed: report stages as they start
	done    bool
	timer   *time.Timer
}

// newDivertProgress returns nil (a no-op reporter) when the caller passed
// no progress token.
func (r *Router) newDivertProgress(pr *progressRoute) *divertProgress {
	if pr == nil {
		return nil
	}
	return startDivertProgress(pr, r.opts.ProgressDelay, func(p map[string]any) { r.sendProgress(pr, p) })
}

func startDivertProgress(pr *progressRoute, delay time.Duration, send func(map[string]any)) *divertProgress {
	d := &divertProgress{pr: pr, send: send}
	if delay < 0 {
		d.due = true
		return d
	}
	d.timer = time.AfterFunc(delay, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.done {
			return
		}
		d.due = true
		if d.current != "" {
			d.sendLocked(d.current)
		}
	})
	return d
}

// stage says what diverting does now.
func (d *divertProgress) stage(msg string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.current = msg
	if d.due && !d.done {
		d.sendLocked(msg)
	}
}

func (d *divertProgress) sendLocked(msg string) {
	d.pr.mu.Lock()
	d.pr.last++
	v := d.pr.last
	d.pr.mu.Unlock()
	d.send(map[string]any{"progressToken": d.pr.token, "progress": v, "message": "scratchpad-mcp: " + msg})
}

// stop ends reporting: nothing is sent after the reply.
func (d *divertProgress) stop() {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.done = true
	d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}

// decode is json.Unmarshal into a map, nil when params are not an object.
func decode(params json.RawMessage) map[string]any {
	var p map[string]any
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	return p
}
