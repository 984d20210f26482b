package server

import (
	"context"
	"log/slog"
	"sync"
)

// outboxSize bounds the notifications waiting for one session's
// standalone stream (log messages, resource updates): a client that does
// not read loses what comes after, never anyone else's delivery.
const outboxSize = 256

// outbox sends one session's notifications that belong to no request, in
// order, off the caller's goroutine: an upstream delivers to every
// session from one goroutine, and a client that stopped reading its
// stream must not hold it. When the queue is full the notification is
// dropped and the session is told so in the log, once per run of drops.
type outbox struct {
	log  *slog.Logger
	id   string
	once sync.Once
	q    chan func()
	done chan struct{}

	mu      sync.Mutex
	dropped int
}

func newOutbox(log *slog.Logger, id string, done chan struct{}) *outbox {
	return &outbox{log: log, id: id, q: make(chan func(), outboxSize), done: done}
}

// send queues f, or drops it when the queue is full. It never blocks.
func (o *outbox) send(method string, f func(ctx context.Context) error) {
	o.once.Do(func() { go o.run() })
	select {
	case o.q <- func() {
		if err := f(context.Background()); err != nil {
			o.log.Debug("notification to client failed", "session", o.id, "method", method, "error", err)
		}
	}:
		o.mu.Lock()
		if o.dropped > 0 {
			o.log.Warn("client reads its stream again; notifications were dropped meanwhile", "session", o.id, "dropped", o.dropped)
			o.dropped = 0
		}
		o.mu.Unlock()
	default:
		o.mu.Lock()
		o.dropped++
		first := o.dropped == 1
		o.mu.Unlock()
		if first {
			o.log.Warn("client does not read its stream: notifications to it are dropped until it does (others are not held)", "session", o.id, "method", method, "queued", outboxSize)
		}
	}
}

func (o *outbox) run() {
	for {
		select {
		case f := <-o.q:
			f()
		case <-o.done:
			return
		}
	}
}
