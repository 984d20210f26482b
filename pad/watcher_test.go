package pad

import (
	"testing"
	"testing/synctest"
	"time"
)

// A notify function may unsubscribe (a session that is gone), and the
// poll stops at its next round once nobody is subscribed. In a
// testing/synctest bubble: the poll's interval (the real one) passes at
// once, and the round after it is over when synctest.Wait returns.
func TestWatcherUnsubscribeFromNotify(t *testing.T) {
	p := newPad(t, Options{}) // its folder made outside the bubble
	synctest.Test(t, func(t *testing.T) { watcherUnsubscribeFromNotify(t, p) })
}

func watcherUnsubscribeFromNotify(t *testing.T, p *Pad) {
	w := NewWatcher()
	calls := make(chan struct{}, 8)
	w.Subscribe("gone", p, func() {
		calls <- struct{}{}
		w.Unsubscribe("gone")
	})
	if _, err := p.Append("one", nil); err != nil {
		t.Fatal(err)
	}
	w.Changed(p)
	<-calls
	p.Append("two", nil)
	w.Changed(p) // notifies synchronously: nobody is left to
	if len(calls) != 0 {
		t.Fatalf("%d notifications after unsubscribing", len(calls))
	}
	time.Sleep(pollInterval)
	synctest.Wait()
	w.mu.Lock()
	polling := w.polling
	w.mu.Unlock()
	if polling {
		t.Fatal("the poll goes on with no subscriber")
	}
	if len(calls) != 0 {
		t.Fatalf("%d notifications after unsubscribing", len(calls))
	}
	var none *Watcher
	none.Changed(p) // a nil Watcher is a valid "no subscribers"
}
