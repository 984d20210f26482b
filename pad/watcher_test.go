package pad

import (
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// A notify function may unsubscribe (a session that is gone), and the
// poll stops once nobody is subscribed.
func TestWatcherUnsubscribeFromNotify(t *testing.T) {
	old := pollInterval
	pollInterval = 5 * time.Millisecond
	t.Cleanup(func() { pollInterval = old })

	p := newPad(t, Options{})
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
	testwait.For(t, "the poll to end with no subscriber", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return !w.polling })
	if len(calls) != 0 {
		t.Fatalf("%d notifications after unsubscribing", len(calls))
	}
	var none *Watcher
	none.Changed(p) // a nil Watcher is a valid "no subscribers"
}
