package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Resumption across replicas. A 2025 client whose POST stream broke
// resumes it with GET and Last-Event-ID; behind a balancer that GET may
// reach a replica (B) that never had the stream: the call runs on the
// replica that made it (A), and what it sends lands in A's event store,
// per process. B asks for the stream instead of answering 400:
//
//   - B subscribes to a reply channel of its own (a random token under
//     the session's owner and id), then publishes "resume" on the
//     session's end channel, which every copy of the session listens to
//     (replica_relay.go); Publish says how many copies heard it.
//   - Each copy answers once on the reply channel: "none" when it has
//     neither the stream nor its events, "fail" with a status and a
//     reason (another response carries it; its events were purged), or
//     "here", then what its store kept after Last-Event-ID, one "event"
//     each with its index, then, for a stream still running, every later
//     message that no response on A carries (orphaned), as it is made,
//     and "end" after the stream's last answer. B waits for every copy's
//     answer (at most [relayTimeout]) and writes the events under the
//     ids A gave them; all "none" is answered 400 as without replicas.
//   - B's client leaving publishes "leave": A's stream is orphaned again
//     (its resumption window runs). A resumption on A itself, or on a
//     third replica, takes the stream over: the former carrier gets
//     "gone" and ends its response, as one whose event could not be
//     relayed (larger than [maxRelayEvent]) or whose queue dropped one
//     (an index gap) does; the client resumes again from the last id it
//     got, and what it missed is replayed from A's store.
//
// Bounds: one event of at most maxRelayEvent bytes per message; B's queue
// is a subscription's ([state.SubscriptionQueue]); a session's copy
// serves at most [maxPeerResumes] asks at once (more are not answered:
// the asker's wait ends at relayTimeout). Channels are named by the
// session's owner and id: nothing reaches another owner or session.

// maxRelayEvent bounds one event relayed to another replica's
// resumption: a 100 MB result does not go through Redis pub/sub (whose
// subscribers' output buffers are bounded too); the resumed response
// ends before it and the client's next resumption, on A, replays it.
const maxRelayEvent = 4 << 20

// maxPeerResumes bounds the other replicas' resumptions a session's copy
// serves at once.
const maxPeerResumes = 4

// The messages of a reply channel.
var (
	peerNone = []byte("none")
	peerHere = []byte("here")
	peerEnd  = []byte("end")
	peerGone = []byte("gone")
)

// errNotHeld says no replica answered for the stream.
var errNotHeld = errors.New("no replica keeps this stream")

// resumeChannel is the reply channel of one resumption of owner's
// session id.
func resumeChannel(owner, id, token string) string {
	return layout.OwnerSegment(owner) + "session/" + id + "/resume/" + token
}

// streamPeer is a resumption on another replica carrying a stream.
type streamPeer struct {
	token   string
	publish func([]byte) (int, error) // on its reply channel
}

// say publishes msg to the peer; false when it failed or no one listens.
func (p *streamPeer) say(msg []byte) bool {
	n, err := p.publish(msg)
	return err == nil && n > 0
}

func eventMessage(index int, data []byte) []byte {
	msg := make([]byte, 0, len(data)+16)
	msg = append(msg, "event "...)
	msg = strconv.AppendInt(msg, int64(index), 10)
	msg = append(msg, '\n')
	return append(msg, data...)
}

// toPeer relays parts, event index of s, to the resumption carrying s on
// another replica. A failure or an event too big drops the peer (its
// response ends; s is orphaned again). The caller holds s.mu.
func (s *httpStream) toPeer(index int, parts [][]byte) bool {
	if size(parts) > maxRelayEvent {
		s.peer.say(peerGone)
		s.peer = nil
		return false
	}
	if !s.peer.say(eventMessage(index, join(parts))) {
		s.peer = nil
		return false
	}
	return true
}

// dropPeer tells the resumption carrying s elsewhere that it no longer
// does. The caller holds s.mu.
func (s *httpStream) dropPeer() {
	if s.peer != nil {
		s.peer.say(peerGone)
		s.peer = nil
	}
}

// holds reports whether this replica can serve a resumption of stream
// after last itself: the stream is live here or the store kept it.
func (c *httpConn) holds(ctx context.Context, stream string, last int) bool {
	c.mu.Lock()
	s := c.streams[stream]
	c.mu.Unlock()
	if s != nil {
		return true
	}
	if c.store == nil {
		return false
	}
	for _, err := range c.store.After(ctx, c.id, stream, last) {
		return err == nil
	}
	return true
}

// resumeFor answers another replica's resumption of stream after last
// (see above) through reply.
func (c *httpConn) resumeFor(ctx context.Context, stream string, last int, token string, reply func([]byte) (int, error)) {
	p := &streamPeer{token: token, publish: reply}
	c.mu.Lock()
	s, closed := c.streams[stream], c.closed
	c.mu.Unlock()
	if closed || c.store == nil || stream == "" {
		p.say(peerNone)
		return
	}
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.w != nil {
			p.say(fmt.Appendf(nil, "fail %d another request already carries this stream", http.StatusConflict))
			return
		}
	}
	live := s != nil && s.pending > 0
	var replay [][]byte
	for data, err := range c.store.After(ctx, c.id, stream, last) {
		if err != nil {
			if s == nil {
				p.say(peerNone)
			} else {
				p.say(fmt.Appendf(nil, "fail %d cannot replay the stream: %v", http.StatusBadRequest, err))
			}
			return
		}
		replay = append(replay, data)
	}
	if !p.say(peerHere) {
		return
	}
	for i, data := range replay {
		if len(data) > maxRelayEvent {
			p.say(peerGone)
			return
		}
		if !p.say(eventMessage(last+1+i, data)) {
			return
		}
	}
	if !live {
		p.say(peerEnd)
		return
	}
	s.dropPeer()
	s.peer = p
	s.written = s.next
	s.carried()
}

// peerLeft notes that the resumption token of stream on another replica
// ended before the stream did: the stream is orphaned again.
func (c *httpConn) peerLeft(stream, token string) {
	c.mu.Lock()
	s := c.streams[stream]
	c.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.peer != nil && s.peer.token == token {
		s.peer = nil
		s.orphaned()
	}
}

// peerAsk serves a message of the session's end channel that asks about
// a stream ("resume <token> <last> <stream>", "leave <token> <stream>"),
// and reports whether msg was one.
func (h *httpHandler) peerAsk(hs *httpSession, msg []byte) bool {
	verb, rest, _ := bytes.Cut(msg, []byte(" "))
	switch string(verb) {
	case "resume":
		f := strings.SplitN(string(rest), " ", 3)
		if len(f) != 3 || !validToken(f[0]) {
			return true
		}
		last, err := strconv.Atoi(f[1])
		if err != nil {
			return true
		}
		select {
		case hs.conn.peerSlots <- struct{}{}:
		default:
			h.s.log.Warn("another replica's resumption not answered: this copy serves its limit of them", "session", hs.conn.id, "limit", maxPeerResumes)
			return true
		}
		ch := resumeChannel(hs.se.owner, hs.conn.id, f[0])
		go func() {
			defer func() { <-hs.conn.peerSlots }()
			hs.conn.resumeFor(context.Background(), f[2], last, f[0], func(data []byte) (int, error) {
				ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
				defer cancel()
				return h.s.opts.State.Publish(ctx, ch, data)
			})
		}()
		return true
	case "leave":
		token, stream, ok := strings.Cut(string(rest), " ")
		if ok && validToken(token) {
			hs.conn.peerLeft(stream, token)
		}
		return true
	}
	return false
}

// validToken reports a token [rand.Text] could have made.
func validToken(t string) bool {
	if len(t) != 26 {
		return false
	}
	for _, r := range t {
		if (r < 'A' || r > 'Z') && (r < '2' || r > '7') {
			return false
		}
	}
	return true
}

// resumeElsewhere serves w, a resumption of stream after last that this
// replica does not hold, from the replica that does (see above).
func (h *httpHandler) resumeElsewhere(w http.ResponseWriter, r *http.Request, hs *httpSession, stream string, last int) {
	token := rand.Text()
	owner, id := hs.se.owner, hs.conn.id
	sub, err := h.s.opts.State.Subscribe(r.Context(), resumeChannel(owner, id, token))
	if err != nil {
		http.Error(w, fmt.Sprintf("cannot replay the stream: asking the other replicas: %v", err), http.StatusServiceUnavailable)
		return
	}
	defer sub.Close()
	_, ctl := sessionChannels(owner, id)
	ask := func(msg string) (int, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), relayTimeout)
		defer cancel()
		return h.s.opts.State.Publish(ctx, ctl, []byte(msg))
	}
	n, err := ask(fmt.Sprintf("resume %s %d %s", token, last, stream))
	if err != nil {
		http.Error(w, fmt.Sprintf("cannot replay the stream: asking the other replicas: %v", err), http.StatusServiceUnavailable)
		return
	}
	// Every copy answers once; the first "here" is the stream's.
	wait := time.NewTimer(relayTimeout)
	defer wait.Stop()
	here := false
	for answered := 0; !here && answered < n; {
		select {
		case msg, open := <-sub.C():
			if !open {
				n = 0
				break
			}
			switch {
			case bytes.Equal(msg, peerHere):
				here = true
			case bytes.HasPrefix(msg, []byte("fail ")):
				code, reason, _ := strings.Cut(string(msg[len("fail "):]), " ")
				status, _ := strconv.Atoi(code)
				if status < 400 || status > 599 {
					status = http.StatusBadRequest
				}
				http.Error(w, reason, status)
				return
			default:
				answered++
			}
		case <-wait.C:
			n = 0
		case <-r.Context().Done():
			return
		}
	}
	if !here {
		http.Error(w, fmt.Sprintf("cannot replay the stream: %v", errNotHeld), http.StatusBadRequest)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
	next := last + 1
	left := func() { _, _ = ask("leave " + token + " " + stream) }
	for {
		select {
		case msg, open := <-sub.C():
			if !open {
				left()
				return
			}
			if bytes.Equal(msg, peerEnd) || bytes.Equal(msg, peerGone) {
				return
			}
			head, data, ok := bytes.Cut(msg, []byte("\n"))
			index, err := strconv.Atoi(strings.TrimPrefix(string(head), "event "))
			if !ok || err != nil || index < next {
				continue
			}
			if index > next || sub.Dropped() > 0 {
				// A message was lost: end here, the client resumes
				// from the last id it got.
				left()
				return
			}
			next++
			if len(data) == 0 { // a prime event
				continue
			}
			if err := writeEvent(w, "message", stream+"_"+strconv.Itoa(index), data); err != nil {
				left()
				return
			}
		case <-r.Context().Done():
			left()
			return
		case <-hs.conn.done:
			return
		}
	}
}
