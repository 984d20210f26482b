package divert

import (
	"io"
	"sync/atomic"
)

// writeBehind passes what it is given to a goroutine that writes it on, so
// that pretty-printing the next MiB of a JSON output overlaps with hashing,
// counting and writing the last one: two cores instead of one. It holds at
// most behindBuffers MiB.
type writeBehind struct {
	full   chan []byte
	free   chan []byte
	done   chan error
	failed atomic.Pointer[error] // the first error of the writes, as soon as it happens
}

const behindBuffers = 3

func newWriteBehind(to io.Writer) *writeBehind {
	w := &writeBehind{full: make(chan []byte, behindBuffers), free: make(chan []byte, behindBuffers), done: make(chan error, 1)}
	for range behindBuffers {
		w.free <- make([]byte, 0, 1<<20)
	}
	go func() {
		var err error
		for b := range w.full {
			if err == nil {
				if _, err = to.Write(b); err != nil {
					w.failed.Store(&err)
				}
			}
			w.free <- b[:0]
		}
		w.done <- err
	}()
	return w
}

// Write copies p into free buffers and queues them; it fails once a
// queued write has failed (Close says so in any case).
func (w *writeBehind) Write(p []byte) (int, error) {
	if err := w.failed.Load(); err != nil {
		return 0, *err
	}
	n := len(p)
	for len(p) > 0 {
		b := <-w.free
		k := copy(b[:cap(b)], p)
		w.full <- b[:k]
		p = p[k:]
	}
	return n, nil
}

// Close waits until everything queued is written and returns the first
// error. The writeBehind must not be used afterwards.
func (w *writeBehind) Close() error {
	close(w.full)
	return <-w.done
}
