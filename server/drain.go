package server

import (
	"context"
	"net/http"
	"sync"
)

// Draining: a replica told to stop (SIGTERM) stops taking new work,
// lets the calls in flight finish within a bound, then ends the rest
// ([Server.Shutdown]). Long requests that are not work (a 2026-07-28
// listen) end at once, answered.

// inflight counts the requests being handled, both eras.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n reaches 0 while draining; nil otherwise
}

// begin counts one request in; end must be called when it is answered.
func (f *inflight) begin() (end func()) {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.n--; f.n == 0 && f.zero != nil {
			close(f.zero)
			f.zero = nil
		}
	}
}

// idle is a channel closed once no request is in flight.
func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	if f.n == 0 {
		close(ch)
		return ch
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	return f.zero
}

// Drain stops the server taking new requests (HTTP answers 503 with
// Retry-After, so a balancer sends them elsewhere; [Server.Ready] says
// not ready), ends the open listens, and waits until the requests in
// flight are answered or ctx ends. It reports whether they all were.
// [Server.Shutdown] then ends what is left.
func (s *Server) Drain(ctx context.Context) bool {
	s.draining.Store(true)
	s.endListens()
	select {
	case <-s.calls.idle():
		return true
	case <-ctx.Done():
		return false
	}
}

// Draining reports whether [Server.Drain] was called.
func (s *Server) Draining() bool { return s.draining.Load() }

// refuseDraining answers a request that would start work while the
// server drains, and reports whether it did.
func (s *Server) refuseDraining(w http.ResponseWriter) bool {
	if !s.draining.Load() {
		return false
	}
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close")
	http.Error(w, "the server is shutting down; retry on another replica", http.StatusServiceUnavailable)
	return true
}

// endListens answers every open listen, gracefully: it is not work in
// flight, and would hold the drain until its client goes.
func (s *Server) endListens() {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	for l := range s.listeners {
		l.end()
	}
}
