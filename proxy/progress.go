package proxy

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"sync"
	"time"
)

// progressRoute remembers the caller of an in-flight request that asked
// for progress: its session, its request context (progress sent with it
// travels on the caller's own stream) and its own token.
type progressRoute struct {
	ctx   context.Context
	sess  Session
	token any

	mu   sync.Mutex
	last float64 // highest progress sent: ours must keep increasing
}

// forwardMeta copies the caller's _meta for the upstream, replacing the
// progress token with one unique across all callers (upstreams are
// shared) and remembering where progress for it goes. Call done when the
// request is over.
func (p *Proxy) forwardMeta(ctx context.Context, s Session, m map[string]any) (out map[string]any, pr *progressRoute, done func()) {
	done = func() {}
	if len(m) == 0 {
		return nil, nil, done
	}
	out = maps.Clone(m)
	if tok, ok := m["progressToken"]; ok && tok != nil {
		id := "sp-" + strconv.FormatInt(progressSeq.Add(1), 10)
		pr = &progressRoute{ctx: ctx, sess: s, token: tok}
		p.progressMu.Lock()
		p.progress[id] = pr
		p.progressMu.Unlock()
		out["progressToken"] = id
		done = func() {
			p.progressMu.Lock()
			delete(p.progress, id)
			p.progressMu.Unlock()
		}
	}
	return out, pr, done
}

// forwardProgress sends an upstream's notifications/progress to its
// caller under the caller's own token. Upstream notifications are
// delivered before the response they precede (see package upstream), so
// the caller hears them before its result.
func (p *Proxy) forwardProgress(params json.RawMessage) {
	var n map[string]any
	if json.Unmarshal(params, &n) != nil {
		return
	}
	tok, _ := n["progressToken"].(string)
	p.progressMu.Lock()
	pr := p.progress[tok]
	p.progressMu.Unlock()
	if pr == nil {
		return
	}
	n["progressToken"] = pr.token
	pr.mu.Lock()
	if v, ok := n["progress"].(float64); ok && v > pr.last {
		pr.last = v
	}
	pr.mu.Unlock()
	p.sendProgress(pr, n)
}

func (p *Proxy) sendProgress(pr *progressRoute, n map[string]any) {
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	if err := pr.sess.Notify(pr.ctx, "notifications/progress", b); err != nil {
		p.log.Debug("forwarding progress failed", "error", err)
	}
}

// divertProgress tells a caller that asked for progress what diverting
// its output is doing, once it has taken longer than
// [Options.ProgressDelay]: counting a 100 MB output or writing it can take
// seconds, and a silent call looks hung. Its progress values continue
// from the upstream's last one, so they keep increasing.
type divertProgress struct {
	pr   *progressRoute
	send func(n map[string]any)

	mu      sync.Mutex
	current string
	due     bool // the delay has passed: report stages as they start
	done    bool
	timer   *time.Timer
}

// progressAtOnce is the size of a result whose divert reports every
// stage from the start: storing and counting this much takes longer than
// [Options.ProgressDelay] anyway (a 20 MB output took 2.4–3.5 s), so
// waiting for the delay would only make the first report late (and
// whether it came at all a matter of the machine's speed).
const progressAtOnce = 4 << 20

// newDivertProgress returns nil (a no-op reporter) when the caller passed
// no progress token. size is the result's, in bytes.
func (p *Proxy) newDivertProgress(pr *progressRoute, size int) *divertProgress {
	if pr == nil {
		return nil
	}
	d := &divertProgress{pr: pr, send: func(n map[string]any) { p.sendProgress(pr, n) }}
	if p.opts.ProgressDelay < 0 || size >= progressAtOnce {
		d.due = true
		return d
	}
	d.timer = time.AfterFunc(p.opts.ProgressDelay, func() {
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
