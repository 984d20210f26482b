package pad

import (
	"sync"
	"sync/atomic"
	"time"
)

// Watcher tells subscribers when the pad they subscribed to changes. It
// holds no MCP types: the server subscribes each session with a notify
// function that sends notifications/resources/updated over whatever
// library it speaks.
//
// A change is announced once per subscriber: [Watcher.Changed] after a
// write through the tools, and a poll (every 2s while anyone is
// subscribed) for changes made elsewhere — hand edits, CLI restores,
// other processes or hosts sharing a run's pad. Both compare the pad's
// stamp (file mtimes and sizes, or the Redis version counter and hashes)
// with the last one seen, so neither announces what the other already
// has.
type Watcher struct {
	every time.Duration // poll interval, fixed at creation

	mu      sync.Mutex
	subs    map[string]subscription // by subscriber
	pads    map[string]*Pad         // pad location → pad, for the poll
	stamps  map[string]string       // pad location → last seen stamp
	polling bool                    // a poll goroutine is running

	// stampMu makes taking a stamp and comparing it one step for the poll
	// and for Changed, without holding mu across a Redis round trip;
	// otherwise one could overwrite the other's newer stamp with an older
	// one and announce a change twice.
	stampMu sync.Mutex

	// rounds counts the poll's finished rounds (each one's notifications
	// sent): a test waits for rounds to pass rather than for time to.
	rounds atomic.Int64
}

type subscription struct {
	loc    string // the subscribed pad's Location
	notify func()
}

// pollInterval is how often subscribed pads are checked for changes made
// outside this server's tools. Tests shorten it before NewWatcher.
var pollInterval = 2 * time.Second

// NewWatcher returns a Watcher with no subscribers.
func NewWatcher() *Watcher {
	return &Watcher{every: pollInterval, subs: map[string]subscription{}, pads: map[string]*Pad{}, stamps: map[string]string{}}
}

// Subscribe calls notify whenever p changes, until [Watcher.Unsubscribe]
// with the same subscriber (a session id); subscribing again replaces the
// earlier subscription. notify runs on the writer's or the poll's
// goroutine, never under the Watcher's locks, so it may call Unsubscribe
// (for a session that is gone); it should not block long.
func (w *Watcher) Subscribe(subscriber string, p *Pad, notify func()) {
	loc := p.Location()
	st, _ := stamp(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[subscriber] = subscription{loc: loc, notify: notify}
	if _, ok := w.pads[loc]; !ok {
		w.pads[loc] = p
		w.stamps[loc] = st
	}
	if !w.polling {
		w.polling = true
		go w.poll()
	}
}

// Unsubscribe ends subscriber's subscription, if any.
func (w *Watcher) Unsubscribe(subscriber string) {
	w.mu.Lock()
	delete(w.subs, subscriber)
	w.mu.Unlock()
}

// Changed notifies the subscribers of p after a change made through this
// server, and records the new stamp so the poll does not announce the
// same change again. A nil Watcher does nothing.
func (w *Watcher) Changed(p *Pad) {
	if w == nil {
		return
	}
	loc := p.Location()
	w.stampMu.Lock()
	w.mu.Lock()
	_, watched := w.pads[loc]
	w.mu.Unlock()
	if watched {
		st, ok := stamp(p)
		w.mu.Lock()
		if ok && st == w.stamps[loc] {
			// The poll saw this change first and announced it.
			w.mu.Unlock()
			w.stampMu.Unlock()
			return
		}
		if ok {
			w.stamps[loc] = st
		}
		w.mu.Unlock()
	}
	w.stampMu.Unlock()
	w.notify(loc)
}

// stamp summarizes the pad and its ledger; any write changes it. ok is
// false when the store cannot be read (Redis down): keep the old stamp
// then rather than announce a change that did not happen.
func stamp(p *Pad) (s string, ok bool) {
	s, err := p.store.stamp()
	return s, err == nil
}

// poll checks subscribed pads until no subscription is left. Stamps are
// taken outside mu: on Redis each is a round trip.
func (w *Watcher) poll() {
	for {
		time.Sleep(w.every)
		w.stampMu.Lock()
		w.mu.Lock()
		if len(w.subs) == 0 {
			w.polling = false
			w.mu.Unlock()
			w.stampMu.Unlock()
			return
		}
		pads := make(map[string]*Pad, len(w.pads))
		for loc, p := range w.pads {
			pads[loc] = p
		}
		w.mu.Unlock()
		fresh := map[string]string{}
		for loc, p := range pads {
			if st, ok := stamp(p); ok {
				fresh[loc] = st
			}
		}
		var changed []string
		w.mu.Lock()
		for loc, st := range fresh {
			if st != w.stamps[loc] {
				w.stamps[loc] = st
				changed = append(changed, loc)
			}
		}
		w.mu.Unlock()
		w.stampMu.Unlock()
		for _, loc := range changed {
			w.notify(loc)
		}
		w.rounds.Add(1)
	}
}

// notify calls the notify function of each subscriber of the pad at loc.
func (w *Watcher) notify(loc string) {
	w.mu.Lock()
	var fns []func()
	for _, s := range w.subs {
		if s.loc == loc {
			fns = append(fns, s.notify)
		}
	}
	w.mu.Unlock()
	for _, f := range fns {
		f()
	}
}
