package intercept

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// pendingNotes counts, per client session, the notifications (progress,
// logging, cancellation) the proxy handed to mcp-go's streamable HTTP server that its
// output has not shown yet. mcp-go writes them from a goroutine of their
// own and drops one that a request's stream takes off its queue just as
// the request's answer is written; a client also drops progress for a
// request it has its answer to. So a call does not answer until what it
// sent is out, or a short while has passed. (Over stdio and legacy SSE the
// proxy writes these notifications itself, in order: see
// [Router.notifyDirect].)
type pendingNotes struct {
	total atomic.Int64 // 0: output is not looked at
	mu    sync.Mutex
	n     map[string]int
}

// notesFlushWait bounds how long an answer waits for its notifications.
const notesFlushWait = 250 * time.Millisecond

func (p *pendingNotes) add(session string, d int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	n := p.n[session] + d
	if n < 0 {
		n = 0
	}
	p.total.Add(int64(n - p.n[session]))
	if n == 0 {
		delete(p.n, session)
	} else {
		p.n[session] = n
	}
}

// countedMethods are what the proxy sends through [Router.notify] and
// sendProgress, as they appear in the output.
var countedMethods = [][]byte{
	[]byte(`"method":"notifications/progress"`),
	[]byte(`"method":"notifications/message"`),
	[]byte(`"method":"notifications/cancelled"`),
}

// seen counts the notifications in p, written to session's client.
func (p *pendingNotes) seen(session string, out []byte) {
	if p.total.Load() == 0 {
		return
	}
	n := 0
	for _, m := range countedMethods {
		n += bytes.Count(out, m)
	}
	if n > 0 {
		p.add(session, -n)
	}
}

func (p *pendingNotes) pending(session string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[session] > 0
}

// flush waits, at most max, until what was sent to the session of ctx
// has been written.
func (p *pendingNotes) flush(ctx context.Context, max time.Duration) {
	if p.total.Load() == 0 {
		return
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil {
		return
	}
	session := cs.SessionID()
	deadline := time.Now().Add(max)
	for p.pending(session) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			// Lost on the way (mcp-go drops what a closed stream took):
			// the next call must not wait for it too.
			p.mu.Lock()
			n := p.n[session]
			p.mu.Unlock()
			p.add(session, -n)
			return
		}
		time.Sleep(time.Millisecond)
	}
}
