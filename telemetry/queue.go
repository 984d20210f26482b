package telemetry

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanQueue is the span processor: a bounded channel between the calls
// that end spans and one goroutine that exports them in batches. OnEnd
// never blocks: when the queue is full (the endpoint is down or slow) the
// span is dropped and counted. The SDK's BatchSpanProcessor drops the
// same way but does not let us count the drops; this one does.
type spanQueue struct {
	exp      sdktrace.SpanExporter
	ch       chan sdktrace.ReadOnlySpan
	flush    chan chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	timeout  time.Duration
	interval time.Duration
	dropped  atomic.Int64
}

// maxBatch bounds one export request.
const maxBatch = 512

func newSpanQueue(exp sdktrace.SpanExporter, size int, timeout, interval time.Duration) *spanQueue {
	if interval <= 0 {
		interval = time.Second
	}
	q := &spanQueue{exp: exp, ch: make(chan sdktrace.ReadOnlySpan, size), flush: make(chan chan struct{}),
		stop: make(chan struct{}), done: make(chan struct{}), timeout: timeout, interval: interval}
	go q.run()
	return q
}

func (q *spanQueue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (q *spanQueue) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	select {
	case q.ch <- s:
	default:
		q.dropped.Add(1)
	}
}

func (q *spanQueue) run() {
	defer close(q.done)
	t := time.NewTicker(q.interval)
	defer t.Stop()
	batch := make([]sdktrace.ReadOnlySpan, 0, maxBatch)
	export := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
		// A failed export loses its batch: retrying would hold the
		// queue and drop newer spans instead.
		_ = q.exp.ExportSpans(ctx, batch)
		cancel()
		clear(batch)
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case s := <-q.ch:
				batch = append(batch, s)
				if len(batch) == maxBatch {
					export()
				}
			default:
				export()
				return
			}
		}
	}
	for {
		select {
		case s := <-q.ch:
			batch = append(batch, s)
			if len(batch) == maxBatch {
				export()
			}
		case <-t.C:
			export()
		case reply := <-q.flush:
			drain()
			close(reply)
		case <-q.stop:
			drain()
			return
		}
	}
}

func (q *spanQueue) ForceFlush(ctx context.Context) error {
	reply := make(chan struct{})
	select {
	case q.flush <- reply:
	case <-q.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-reply:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *spanQueue) Shutdown(ctx context.Context) error {
	q.once.Do(func() { close(q.stop) })
	select {
	case <-q.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return q.exp.Shutdown(ctx)
}
