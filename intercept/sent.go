package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// sentRequests learns the ids of the requests the proxy forwards to a
// client (sampling, elicitation, roots). mcp-go chooses those ids and does
// not expose them, yet an upstream that cancels its request must have the
// client told, with notifications/cancelled naming that id. So the
// server's output ([Router.Output], [Router.OutputHTTP]) is watched while
// a forwarded request waits for its id: a slot is opened before the
// request is handed to mcp-go and is filled by the first request with the
// same session and method written after it. One slot per session and
// method is open at a time, so concurrent requests cannot be mixed up.
type sentRequests struct {
	open atomic.Int32 // slots waiting for their id; 0: output is not looked at

	mu    sync.Mutex
	slots []*sentSlot
	locks map[string]chan struct{} // session+method → held by the open slot
}

type sentSlot struct {
	session, method string
	lock            chan struct{}
	once            sync.Once
	id              json.RawMessage // set by observe, under sentRequests.mu
}

// slotWait bounds how long a forwarded request waits for an earlier one
// of the same session and method to be written. Past it the request is
// sent untracked: an output that is not watched must not serialize them.
const slotWait = 2 * time.Second

// expect opens a slot for the next request with method written to
// session's client. It returns nil (untracked) when another slot stays
// open too long or ctx ends.
func (s *sentRequests) expect(ctx context.Context, session, method string) *sentSlot {
	key := session + "\x00" + method
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]chan struct{}{}
	}
	lock := s.locks[key]
	if lock == nil {
		lock = make(chan struct{}, 1)
		s.locks[key] = lock
	}
	s.mu.Unlock()
	t := time.NewTimer(slotWait)
	defer t.Stop()
	select {
	case lock <- struct{}{}:
	case <-t.C:
		return nil
	case <-ctx.Done():
		return nil
	}
	slot := &sentSlot{session: session, method: method, lock: lock}
	s.mu.Lock()
	s.slots = append(s.slots, slot)
	s.mu.Unlock()
	s.open.Add(1)
	return slot
}

// release closes slot to later requests; the first call counts.
func (s *sentRequests) release(slot *sentSlot) {
	slot.once.Do(func() {
		s.open.Add(-1)
		<-slot.lock
	})
}

// done closes slot and returns the id its request was sent with, nil
// if it was not seen.
func (s *sentRequests) done(slot *sentSlot) json.RawMessage {
	if slot == nil {
		return nil
	}
	s.release(slot)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, o := range s.slots {
		if o == slot {
			s.slots = append(s.slots[:i], s.slots[i+1:]...)
			break
		}
	}
	return slot.id
}

// observe looks for forwarded requests in p, which the server wrote to
// session's client ("" when the output serves one session: stdio). Each
// line is one message, possibly an SSE "data:" field.
func (s *sentRequests) observe(session string, p []byte) {
	if s.open.Load() == 0 || !bytes.Contains(p, []byte(`"method"`)) {
		return
	}
	for len(p) > 0 {
		line := p
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			line, p = p[:i], p[i+1:]
		} else {
			p = nil
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 || m.Method == "" {
			continue
		}
		s.fill(session, m.Method, m.ID)
	}
}

func (s *sentRequests) fill(session, method string, id json.RawMessage) {
	s.mu.Lock()
	var hit *sentSlot
	for _, slot := range s.slots {
		if slot.id == nil && slot.method == method && (session == "" || slot.session == session) {
			slot.id = append(json.RawMessage(nil), id...)
			hit = slot
			break
		}
	}
	s.mu.Unlock()
	if hit != nil {
		s.release(hit)
	}
}
