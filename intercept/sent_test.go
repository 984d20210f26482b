package intercept

import (
	"context"
	"testing"
	"time"
)

func TestSentRequestsMatchIDs(t *testing.T) {
	var s sentRequests
	ctx := context.Background()
	a := s.expect(ctx, "s1", "sampling/createMessage")
	b := s.expect(ctx, "s2", "sampling/createMessage") // another session: not blocked
	r := s.expect(ctx, "s1", "roots/list")             // another method: not blocked
	if a == nil || b == nil || r == nil {
		t.Fatal("slots not opened")
	}
	// Unrelated traffic, a notification, a response, then the requests,
	// as a streamable HTTP session writes them.
	s.observe("s1", []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"))
	s.observe("s1", []byte(`{"jsonrpc":"2.0","id":4,"result":{}}`+"\n"))
	s.observe("s2", []byte("id: 9\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n"))
	s.observe("s1", []byte("event: message\r\ndata:{\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"method\":\"sampling/createMessage\"}\r\n\r\n"))
	// stdio ("" = its one session)
	s.observe("", []byte(`{"jsonrpc":"2.0","id":8,"method":"roots/list"}`+"\n"))
	for _, tc := range []struct {
		slot *sentSlot
		want string
	}{{a, `"x-1"`}, {b, `7`}, {r, `8`}} {
		if got := string(s.done(tc.slot)); got != tc.want {
			t.Errorf("%s/%s: id %s, want %s", tc.slot.session, tc.slot.method, got, tc.want)
		}
	}
	if n := s.open.Load(); n != 0 || len(s.slots) != 0 {
		t.Errorf("after done: %d open, %d slots", n, len(s.slots))
	}
}

func TestSentRequestsOneOpenSlotPerSessionAndMethod(t *testing.T) {
	var s sentRequests
	ctx := context.Background()
	first := s.expect(ctx, "s", "elicitation/create")
	second := make(chan *sentSlot)
	go func() { second <- s.expect(ctx, "s", "elicitation/create") }()
	select {
	case <-second:
		t.Fatal("a second slot opened while the first waits for its id")
	case <-time.After(50 * time.Millisecond):
	}
	s.observe("s", []byte(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create"}`))
	var next *sentSlot
	select {
	case next = <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("the second slot never opened after the first got its id")
	}
	s.observe("s", []byte(`{"jsonrpc":"2.0","id":2,"method":"elicitation/create"}`))
	if a, b := string(s.done(first)), string(s.done(next)); a != "1" || b != "2" {
		t.Errorf("ids %s, %s; want 1, 2", a, b)
	}
	// A slot never filled (output not watched) is released by done.
	unseen := s.expect(ctx, "s", "roots/list")
	if id := s.done(unseen); id != nil {
		t.Errorf("unseen request has id %s", id)
	}
	if again := s.expect(ctx, "s", "roots/list"); again == nil {
		t.Error("slot not released by done")
	} else {
		s.done(again)
	}
	// A cancelled context opens nothing.
	held := s.expect(ctx, "s", "roots/list")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if got := s.expect(cctx, "s", "roots/list"); got != nil {
		t.Error("slot opened for a cancelled context")
	}
	s.done(held)
	if s.done(nil) != nil {
		t.Error("done(nil)")
	}
}
