package server

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// A 2025 session's copies on several replicas (taken up, replica_recover.go)
// talk through the store's channels ([state.Sessions].Publish and
// Subscribe, Redis pub/sub):
//
//   - its GET stream is held by one replica; a message for it (a
//     list_changed, a log message or resources/updated that belongs to no
//     request) made by a copy on another replica, where no response
//     carries the stream, is published on the session's stream channel,
//     which the replica holding the GET listens to while it does, and
//     written there. When no replica listens, it stays in the event store
//     where it was made, for a GET there, as without replicas.
//   - a DELETE on one replica is published on the session's end channel,
//     which every copy listens to: each ends its own. The same channel
//     carries a replica's asks for a POST stream it was asked to resume
//     and does not hold ("resume", "leave"; replica_resume.go), which end nothing.
//
// Both channels are named by the session's owner and id: a message never
// reaches a session of another owner, nor another session. Each
// subscription's queue is bounded ([state.SubscriptionQueue]; a stream
// that does not keep up loses the newest, counted) and every
// subscription of a replica shares one connection.

// relayTimeout bounds one publish: a notification never waits on a stalled
// Redis longer.
const relayTimeout = 2 * time.Second

// sessionChannels are the channels of owner's session id.
func sessionChannels(owner, id string) (stream, end string) {
	base := layout.OwnerSegment(owner) + "session/" + id
	return base + "/stream", base + "/end"
}

// endMessage is what the end channel carries.
var endMessage = []byte("end")

// relayTo returns hs's relay: a publish on its stream channel, true when
// a replica listening there took the message.
func (h *httpHandler) relayTo(owner, id string) func([]byte) bool {
	stream, _ := sessionChannels(owner, id)
	return func(data []byte) bool {
		ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
		defer cancel()
		n, err := h.s.opts.State.Publish(ctx, stream, data)
		if err != nil {
			h.s.log.Warn("relaying a notification to the replica holding the GET stream failed; kept here", "session", id, "error", err)
			return false
		}
		return n > 0
	}
}

// listenStream writes what other replicas relay for hs's GET stream to
// it, while the GET holds it here; it returns the function that stops.
func (h *httpHandler) listenStream(ctx context.Context, hs *httpSession) (stop func()) {
	if !h.replicated() {
		return func() {}
	}
	stream, _ := sessionChannels(hs.se.owner, hs.conn.id)
	sub, err := h.s.opts.State.Subscribe(ctx, stream)
	if err != nil {
		h.s.log.Warn("listening for other replicas' notifications failed; this GET stream gets this replica's only", "session", hs.conn.id, "error", err)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for data := range sub.C() {
			hs.conn.fromPeer(data)
		}
	}()
	return func() {
		sub.Close()
		<-done
		if n := sub.Dropped(); n > 0 {
			h.s.log.Warn("notifications from other replicas lost: the GET stream did not keep up", "session", hs.conn.id, "dropped", n)
		}
	}
}

// listenEnd ends hs when another replica deletes its session, until ctx
// ends (hs's own end).
func (h *httpHandler) listenEnd(ctx context.Context, hs *httpSession) {
	_, end := sessionChannels(hs.se.owner, hs.conn.id)
	sub, err := h.s.opts.State.Subscribe(ctx, end)
	if err != nil {
		h.s.log.Warn("listening for the session's end on other replicas failed; a DELETE there leaves this copy to its idle timeout", "session", hs.conn.id, "error", err)
		return
	}
	go func() {
		for msg := range sub.C() {
			if h.peerAsk(hs, msg) { // a resumption on another replica (replica_resume.go)
				continue
			}
			h.mu.Lock()
			live := h.sessions[hs.conn.id] == hs
			h.mu.Unlock()
			if live {
				hs.end(ErrSessionEnded)
				h.forget(hs)
			}
		}
	}()
}

// publishEnd tells the other replicas' copies of session id that it was
// deleted.
func (h *httpHandler) publishEnd(owner, id string) {
	if !h.replicated() {
		return
	}
	_, end := sessionChannels(owner, id)
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if _, err := h.s.opts.State.Publish(ctx, end, endMessage); err != nil {
		h.s.log.Warn("telling the other replicas the session ended failed; their copies end at their idle timeout", "session", id, "error", err)
	}
}

// fromPeer writes data, a message another replica relayed, to the
// standalone stream: to the GET's response, or kept for the next GET here
// as a message made here would be. It is never relayed again.
func (c *httpConn) fromPeer(data []byte) {
	c.mu.Lock()
	s, closed := c.streams[""], c.closed
	c.mu.Unlock()
	if closed || s == nil {
		return
	}
	_ = c.send(context.Background(), s, [][]byte{data}, jsonrpc.ID{}, false)
}
