package budget

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// subscriberBuffer is how many records a slow SSE subscriber may lag
// behind before it misses some; emitting never waits for a subscriber.
const subscriberBuffer = 64

// keepAlive is the interval of SSE comment lines, which stop proxies from
// closing an idle stream.
const keepAlive = 15 * time.Second

// Events publishes one scratchpad_usage record per finished agent: it
// appends the record to its owner's usage.jsonl and hands it to every
// in-process subscriber (the GET /events stream). It is safe for
// concurrent use.
type Events struct {
	// memoryDir holds each owner's usage.jsonl (package layout names
	// it); "" when records are not persisted.
	memoryDir string

	mu     sync.Mutex
	subs   map[int]chan Usage
	next   int
	closed bool
}

// NewEvents returns an Events that appends each record to the
// usage.jsonl of its owner's tree in memoryDir (package layout names it),
// creating the file 0600 and its folder 0700 on the first record, through
// memory_dir's root (package memdir: a link planted there leading out of
// memory_dir is refused, never written through). A memoryDir of "" means
// records only go to subscribers.
func NewEvents(memoryDir string) *Events {
	return &Events{subs: map[int]chan Usage{}, memoryDir: memoryDir}
}

// Persisted reports whether records are appended to a file.
func (e *Events) Persisted() bool { return e.memoryDir != "" }

// Finish reports that agent a is done (stdio EOF, HTTP session deleted or
// idle past its TTL, server shutdown). The first call for an agent decides:
// if the agent intercepted or extracted anything its record is appended and
// published, otherwise nothing is. Later calls for the same agent do
// nothing, so a session that ends twice (delete, then shutdown) is counted
// once.
//
// The record is written with one write(2) on a file opened O_APPEND, so
// several server processes sharing a memory_dir never interleave lines.
// Subscribers get the record even when the append fails; the error is
// returned.
func (e *Events) Finish(a *Agent) error {
	if a == nil || !a.finished.CompareAndSwap(false, true) {
		return nil
	}
	u := a.Usage()
	if u.TokensIntercepted == 0 && u.TokensExtracted == 0 {
		return nil
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return ErrEventsClosed
	}
	err := e.appendRecord(u)
	e.publish(u)
	return err
}

func (e *Events) appendRecord(u Usage) error {
	if e.memoryDir == "" {
		return nil
	}
	line, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("budget: encode usage: %w", err)
	}
	line = append(line, '\n')
	tree, err := memdir.In(e.memoryDir, layout.For(e.memoryDir, u.Owner).Base)
	if err != nil {
		return fmt.Errorf("budget: append usage: %w", err)
	}
	f, err := tree.OpenFile(layout.UsageFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("budget: append usage: %w", err)
	}
	_, werr := f.Write(line)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("budget: append usage %s: %w", layout.UsageFile, werr)
	}
	return nil
}

func (e *Events) publish(u Usage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ch := range e.subs {
		select {
		case ch <- u:
		default: // a stalled subscriber must not block the session that finished
		}
	}
}

// Subscribe returns a channel that receives every record published from
// now on, and a function that unsubscribes and closes the channel (safe to
// call more than once). A subscriber that falls more than 64 records
// behind misses records rather than blocking emitters. After [Events.Close]
// the channel is returned already closed.
func (e *Events) Subscribe() (<-chan Usage, func()) {
	ch := make(chan Usage, subscriberBuffer)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		close(ch)
		return ch, func() {}
	}
	id := e.next
	e.next++
	e.subs[id] = ch
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if c, ok := e.subs[id]; ok {
				delete(e.subs, id)
				close(c)
			}
		})
	}
}

// Close closes every subscriber channel, which ends open GET /events
// streams so that http.Server.Shutdown can finish. Finish fails with
// [ErrEventsClosed] afterwards; call it for every live agent first.
func (e *Events) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.closed = true
	for id, ch := range e.subs {
		delete(e.subs, id)
		close(ch)
	}
}

// ServeSSE serves GET /events: a Server-Sent Events stream with one
// "scratchpad_usage" event per finished agent, whose data is the JSON
// record, until the client goes away or [Events.Close] is called. It
// carries the records of agents without an owner; see [Events.Handler].
func (e *Events) ServeSSE(w http.ResponseWriter, r *http.Request) { e.serveSSE(w, r, "") }

// Handler serves GET /events for the owner owner(r) names: the stream
// carries only the records of that owner's agents ("" : agents without
// one), so no owner learns of another's agents.
func (e *Events) Handler(owner func(*http.Request) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.serveSSE(w, r, owner(r)) })
}

func (e *Events) serveSSE(w http.ResponseWriter, r *http.Request, owner string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rc := http.NewResponseController(w)
	flush := func() error {
		// Without flush support events still arrive, only later.
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	ch, cancel := e.Subscribe()
	defer cancel()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	w.WriteHeader(http.StatusOK)
	// A first comment flushes the headers, so the client knows it is
	// subscribed before any agent finishes.
	if _, err := fmt.Fprint(w, ": subscribed\n\n"); err != nil {
		return
	}
	if flush() != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			_, err = fmt.Fprint(w, ": keep-alive\n\n")
		case u, ok := <-ch:
			if !ok {
				return
			}
			if u.Owner != owner {
				continue
			}
			data, merr := json.Marshal(u)
			if merr != nil {
				continue
			}
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", EventName, data)
		}
		if err == nil {
			err = flush()
		}
		if err != nil {
			return
		}
	}
}
