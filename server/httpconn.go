package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// One streamable HTTP session's connection: what go-sdk's server session
// reads from and writes to. The handler (streamable.go) feeds it the
// messages of each POST and lends it the HTTP responses it writes events
// on; it decides which response each message goes to.
//
// A message goes to a stream: the POST's that carried the request it
// answers or was sent for, or the session's standalone stream (the GET)
// for what relates to no request. go-sdk's own connection learns the
// related request from a context key only its server sets; here the
// session's receiving middleware puts the request's [mcp.RequestExtra]
// in the context (see [withRelated]), which the handler made for that
// request.
//
// Every event is kept in the event store, when there is one, under
// "<stream>_<index>" ids, so a client that lost a response can GET it
// again with Last-Event-ID.

// errRejected is go-sdk's jsonrpc2.ErrRejected (matched by code): a
// write the transport refuses without the session being broken.
var errRejected = &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}

// errSessionClosed is returned for writes after the session ended.
var errSessionClosed = errors.New("session closed")

// streamWriteTimeout is how long one event may take to write before the
// client counts as not reading (see [writeEvent]).
const streamWriteTimeout = 10 * time.Second

// relatedKey holds, in a handler's context, the extra of the request it
// handles.
type relatedKey struct{}

// withRelated marks ctx as handling the request whose extra is given, so
// that what is sent with it goes to that request's stream.
func withRelated(ctx context.Context, extra *mcp.RequestExtra) context.Context {
	if extra == nil {
		return ctx
	}
	return context.WithValue(ctx, relatedKey{}, extra)
}

type httpConn struct {
	id       string
	store    mcp.EventStore // nil: events are not kept
	grace    time.Duration  // how long a stream no response carries keeps its calls (see [httpStream.orphaned])
	wire     *rawWire
	ids      callIDs // the client's request ids (ids.go)
	incoming chan jsonrpc.Message
	done     chan struct{} // closed by Close
	onClose  func()
	log      *slog.Logger // nil: nothing logged
	// relay, when not nil, offers another replica a message for the
	// standalone stream that no response carries here; true when a
	// replica holding the session's GET stream took it (replica_relay.go).
	relay func(data []byte) bool
	// peerSlots bounds the other replicas' resumptions served at once
	// (replica_resume.go).
	peerSlots chan struct{}

	mu      sync.Mutex
	closed  bool
	streams map[string]*httpStream            // live streams; "" is the standalone one
	calls   map[jsonrpc.ID]call               // unanswered requests
	related map[*mcp.RequestExtra]*httpStream // their streams, by their extras
}

// call is an unanswered request: its stream, and its extra (which
// handlers' contexts carry, see [withRelated]).
type call struct {
	s     *httpStream
	extra *mcp.RequestExtra
}

// httpStream is a logical stream of events: a POST's, which ends once
// every request in it is answered, or the standalone one. Several HTTP
// responses may carry it in turn (resumption).
type httpStream struct {
	id      string
	version string // protocol version: the prime event is 2025-11-25's

	mu      sync.Mutex
	w       http.ResponseWriter // the response carrying it now; nil if none
	release chan struct{}       // closed to let that response end
	pending int                 // requests not answered yet
	next    int                 // index of the next event
	written int                 // events before it reached a response (standalone)
	unkept  bool                // the store failed an append: no more ids
	peer    *streamPeer         // another replica's resumption carrying it when no response here does (replica_resume.go)

	// gone ends when the client left the stream's calls: no response
	// has carried it for the resumption window (the calls' contexts
	// end with it, [session.callContext]). nil for the standalone
	// stream.
	gone    context.Context
	abandon context.CancelCauseFunc
	grace   time.Duration
	orphan  *time.Timer // running while no response carries the stream
}

func newHTTPConn(id string, store mcp.EventStore, wire *rawWire) *httpConn {
	c := &httpConn{
		id: id, store: store, wire: wire,
		incoming:  make(chan jsonrpc.Message, 10),
		done:      make(chan struct{}),
		streams:   map[string]*httpStream{},
		calls:     map[jsonrpc.ID]call{},
		related:   map[*mcp.RequestExtra]*httpStream{},
		peerSlots: make(chan struct{}, maxPeerResumes),
	}
	c.streams[""] = &httpStream{}
	return c
}

// Connect implements [mcp.Transport]: the connection is its own
// transport, connected once.
func (c *httpConn) Connect(ctx context.Context) (mcp.Connection, error) {
	if c.store != nil {
		if err := c.store.Open(ctx, c.id, ""); err != nil {
			return nil, fmt.Errorf("event store: %w", err)
		}
	}
	return c, nil
}

// SupportsProtocolVersion implements [mcp.ProtocolVersionSupporter]: the
// versions with sessions, so a 2026-07-28 client's server/discover is
// answered without it and the client falls back to initialize.
// SupportsProtocolVersion keeps go-sdk to the 2025 revisions: a
// 2026-07-28 request never reaches a session (rev20260728_http.go).
func (c *httpConn) SupportsProtocolVersion(v string) bool {
	era, _ := wire.EraOf(v)
	return era == wire.Era2025
}

func (c *httpConn) SessionID() string { return c.id }

func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.incoming:
		c.ids.read(msg)
		return msg, nil
	case <-c.done:
		return nil, io.EOF
	}
}

// Close implements [mcp.Connection]; go-sdk calls it when the session
// ends, however it ends.
func (c *httpConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.done)
	streams := make([]*httpStream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		// A resumption on another replica ends with the session here
		// (replica_resume.go); its client's next one is answered there.
		s.mu.Lock()
		s.dropPeer()
		s.mu.Unlock()
	}
	if c.onClose != nil {
		c.onClose()
	}
	if c.store != nil {
		return c.store.SessionClosed(context.Background(), c.id)
	}
	return nil
}

// push hands a client's message to the session.
func (c *httpConn) push(msg jsonrpc.Message) bool {
	select {
	case c.incoming <- msg:
		return true
	case <-c.done:
		return false
	}
}

// open registers a POST's stream with the requests it must answer, or
// names a request already waiting under the same id.
func (c *httpConn) open(ctx context.Context, id, version string, calls []*jsonrpc.Request) (*httpStream, jsonrpc.ID, error) {
	s := &httpStream{id: id, version: version, pending: len(calls), grace: c.grace}
	s.gone, s.abandon = context.WithCancelCause(context.Background())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, jsonrpc.ID{}, errSessionClosed
	}
	seen := make(map[jsonrpc.ID]bool, len(calls))
	for _, r := range calls {
		if _, dup := c.calls[r.ID]; dup || seen[r.ID] {
			return nil, r.ID, nil
		}
		seen[r.ID] = true
	}
	if c.store != nil {
		if err := c.store.Open(ctx, c.id, id); err != nil {
			return nil, jsonrpc.ID{}, fmt.Errorf("event store: %w", err)
		}
	}
	for _, r := range calls {
		extra, _ := r.Extra.(*mcp.RequestExtra)
		c.calls[r.ID] = call{s, extra}
		if extra != nil {
			c.related[extra] = s
		}
	}
	c.streams[id] = s
	return s, jsonrpc.ID{}, nil
}

// Write implements [mcp.Connection]: msg goes to its stream, kept in the
// store and written to the response carrying the stream, if any.
func (c *httpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	var sent json.RawMessage
	if resp, ok := msg.(*jsonrpc.Response); ok {
		sent, _ = c.ids.answered(resp.ID)
	}
	parts, err := c.encode(msg, sent)
	if err != nil {
		return err
	}
	var answers jsonrpc.ID
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return errSessionClosed
	}
	var s *httpStream
	standalone := false
	if resp, ok := msg.(*jsonrpc.Response); ok {
		answers = resp.ID
		cl := c.calls[resp.ID]
		s = cl.s
		delete(c.calls, resp.ID)
		delete(c.related, cl.extra)
	} else if extra, ok := ctx.Value(relatedKey{}).(*mcp.RequestExtra); ok {
		if s = c.related[extra]; s == nil {
			// Sent for a request already answered: its stream is over.
			c.mu.Unlock()
			return fmt.Errorf("%w: the request it relates to is answered", errRejected)
		}
	} else {
		s, standalone = c.streams[""], true
	}
	c.mu.Unlock()
	if s == nil {
		return fmt.Errorf("%w: no request %v is waiting for an answer", errRejected, answers.Raw())
	}
	return c.send(ctx, s, parts, answers, standalone && c.relay != nil)
}

// send writes parts, a message of stream s (the answer to the request
// answers, if valid), to the response carrying s and keeps it in the
// store. With relay, a message no response here carries is offered to
// the replica holding the session's GET stream first.
func (c *httpConn) send(ctx context.Context, s *httpStream, parts [][]byte, answers jsonrpc.ID, relay bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var eventID string
	keep := c.store != nil && !s.unkept
	if keep {
		eventID = s.id + "_" + strconv.Itoa(s.next)
	}
	index := s.next
	s.next++
	written := false
	if s.w != nil {
		if err := writeEvent(s.w, "message", eventID, parts...); err == nil {
			written = true
			s.written = s.next
		} else {
			s.w = nil // the client is gone; the response ends with its context
			if c.log != nil {
				c.log.Debug("stream write failed: the client's stream is dropped", "session", c.id, "stream", s.id, "error", err)
			}
		}
	}
	if s.w == nil && s.peer != nil && s.toPeer(index, parts) {
		// A resumption on another replica carries the stream.
		written = true
		s.written = s.next
	}
	if s.w == nil && relay && c.relay(join(parts)) {
		// Another replica's GET stream took it: not to be caught up on
		// here too.
		written = true
		s.written = s.next
	}
	if s.w == nil {
		s.orphaned()
	}
	finished := false
	if answers.IsValid() {
		s.pending--
		if finished = s.pending == 0; finished {
			if s.release != nil {
				close(s.release)
				s.release = nil
			}
			if s.peer != nil {
				s.peer.say(peerEnd)
				s.peer = nil
			}
			c.mu.Lock()
			delete(c.streams, s.id)
			c.mu.Unlock()
		}
	}
	// Kept after it is written: for a forwarded result, joining the
	// pieces is a copy of it (~0.1 s per 100 MB, most of it first
	// touching new memory), which the client need not wait for. The
	// stream's lock is held, so a resumption sees it kept. Our own
	// store says first whether it would keep it at all.
	kept := false
	mem, _ := c.store.(*memoryEvents)
	if keep && mem != nil && !mem.fits(size(parts)) {
		mem.skip(c.id, s.id)
		kept = true // its place is, and a replay needing it fails
	} else if keep {
		if err := c.store.Append(ctx, c.id, s.id, join(parts)); err == nil {
			kept = true
		} else {
			// The store's indexes no longer match the event ids: what
			// follows on this stream is sent without ids, not resumable.
			s.unkept = true
			if !written {
				return fmt.Errorf("%w: event store: %v", errRejected, err)
			}
		}
	}
	if finished && mem != nil {
		mem.streamDone(c.id, s.id)
	}
	if !kept && !written {
		return fmt.Errorf("%w: no response carries stream %q and no store keeps it", errRejected, s.id)
	}
	return nil
}

func size(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// join is parts as one slice: the only one, or a copy of them all.
func join(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	// Appending to a slice of no capacity lets the runtime skip zeroing
	// what it copies over (make would clear it first).
	var data []byte
	for _, p := range parts {
		data = append(data, p...)
	}
	return data
}

// encode is msg as sent, in pieces: a forwarded tool result is the
// response's head, the upstream's bytes and the closing brace
// (rawwire.go), anything else go-sdk's encoding in one piece. A
// response's id is sent when not nil: the client's (ids.go).
func (c *httpConn) encode(msg jsonrpc.Message, sent json.RawMessage) ([][]byte, error) {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && c.wire != nil {
		if raw, ok := c.wire.take(resp.Result); ok {
			head, err := rawHead(resp.ID, sent)
			if err != nil {
				return nil, err
			}
			return [][]byte{head, raw, []byte("}")}, nil
		}
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		data, err := encodeResponse(resp, sent)
		if err != nil {
			return nil, err
		}
		return [][]byte{data}, nil
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	return [][]byte{data}, nil
}

// attach makes w carry stream id from the event after last (-1: from its
// start, or for the standalone stream from what no response carried
// yet): it replays what the store kept, then, if the stream is live and
// no other response carries it, holds it. The returned channel is closed
// when w may end; nil means w is already complete.
func (c *httpConn) attach(ctx context.Context, w http.ResponseWriter, id string, last int, resumed bool) (s *httpStream, release chan struct{}, status int, err error) {
	c.mu.Lock()
	s = c.streams[id]
	c.mu.Unlock()
	if s == nil && c.store == nil {
		return nil, nil, http.StatusNotFound, fmt.Errorf("stream %q is over and nothing of it was kept", id)
	}
	if s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.w != nil {
			return nil, nil, http.StatusConflict, errors.New("another request already carries this stream")
		}
		s.dropPeer() // resumed here: no longer on another replica
		if !resumed && id == "" {
			last = s.written - 1
		}
	}
	var replay [][]byte
	if c.store != nil && (s != nil || resumed) {
		for data, err := range c.store.After(ctx, c.id, id, last) {
			if err != nil {
				if resumed {
					return nil, nil, http.StatusBadRequest, fmt.Errorf("cannot replay the stream: %w", err)
				}
				// A plain GET still opens the stream when what it
				// would have caught up on was dropped.
				replay = nil
				break
			}
			replay = append(replay, data)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	if id == "" {
		// Proxies may hold the headers of a stream with no data yet.
		_, _ = io.WriteString(w, ": ok\n\n")
	}
	// A resumed stream with nothing to replay says at once that it is
	// taken: its client may wait for that before anything else.
	_ = http.NewResponseController(w).Flush()
	for i, data := range replay {
		if len(data) == 0 { // a prime event: nothing to say again
			continue
		}
		if err := writeEvent(w, "message", id+"_"+strconv.Itoa(last+1+i), data); err != nil {
			return nil, nil, 0, nil
		}
	}
	if s == nil {
		return nil, nil, 0, nil
	}
	s.w = w
	s.release = make(chan struct{})
	s.written = s.next
	s.carried()
	return s, s.release, 0, nil
}

// carry makes w, the response of the POST that opened s, carry it: a
// prime event first when the store keeps events and the protocol has
// them, so the client can resume even before the first message.
func (c *httpConn) carry(ctx context.Context, s *httpStream, w http.ResponseWriter) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
	s.release = make(chan struct{})
	if c.store != nil && s.version >= "2025-11-25" {
		if err := c.store.Append(ctx, c.id, s.id, nil); err == nil {
			_ = writePrime(w, s.id+"_"+strconv.Itoa(s.next))
			s.next++
		}
	}
	return s.release
}

// leave ends w's hold on its stream, if it still has it.
func (s *httpStream) leave(w http.ResponseWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == w {
		s.w = nil
		s.release = nil
	}
	s.orphaned()
}

// orphaned notes that no response carries s. A stream with calls still
// unanswered keeps them for the resumption window, in which the client
// may come back for it (Last-Event-ID); after it, its client counts as
// gone and the calls' contexts end ([ErrClientGone]). MCP says a
// disconnection is not a cancellation, which the window honours: a
// client whose network blinked resumes and gets its answer; one that
// died frees what its calls held seconds later, not at their end. The
// caller holds s.mu.
func (s *httpStream) orphaned() {
	if s.gone == nil || s.w != nil || s.peer != nil || s.pending == 0 || s.orphan != nil || s.gone.Err() != nil {
		return
	}
	if s.grace <= 0 {
		s.abandon(ErrClientGone)
		return
	}
	s.orphan = time.AfterFunc(s.grace, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.orphan = nil
		if s.w == nil && s.peer == nil && s.pending > 0 {
			s.abandon(ErrClientGone)
		}
	})
}

// carried notes that a response carries s again (resumed): its calls
// go on. The caller holds s.mu.
func (s *httpStream) carried() {
	if s.orphan != nil {
		s.orphan.Stop()
		s.orphan = nil
	}
}

// clientGone is the context of the stream that carries the request whose
// extra is given, which ends when its client is gone (see
// [httpStream.orphaned]); nil when no stream carries it.
func (c *httpConn) clientGone(extra *mcp.RequestExtra) context.Context {
	if extra == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.related[extra]; s != nil {
		return s.gone
	}
	return nil
}

// writeEvent writes one server-sent event, its data given in pieces,
// and flushes it. Raw bytes may hold line breaks between JSON tokens:
// each line is a data line, which the client joins with newlines, the
// same JSON.
func writeEvent(w http.ResponseWriter, name, id string, data ...[]byte) error {
	// A client that stops reading fails the write once the deadline
	// passes, and loses its stream, instead of holding the writer (and
	// whoever waits on it) forever. Enough for a big result on a slow
	// link: a base plus a second per MiB.
	rc, done := writeDeadline(w, size(data))
	defer done()
	var head strings.Builder
	head.WriteString("event: ")
	head.WriteString(name)
	head.WriteByte('\n')
	if id != "" {
		head.WriteString("id: ")
		head.WriteString(id)
		head.WriteByte('\n')
	}
	head.WriteString("data: ")
	if _, err := io.WriteString(w, head.String()); err != nil {
		return err
	}
	for _, p := range data {
		for {
			i := lineBreak(p)
			if i < 0 {
				break
			}
			if _, err := w.Write(p[:i]); err != nil {
				return err
			}
			if _, err := io.WriteString(w, "\ndata: "); err != nil {
				return err
			}
			if p[i] == '\r' && i+1 < len(p) && p[i+1] == '\n' {
				i++
			}
			p = p[i+1:]
		}
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, "\n\n"); err != nil {
		return err
	}
	return rc.Flush()
}

// writeDeadline bounds the writing of n bytes to w: a base plus a second
// per MiB. done lifts it.
func writeDeadline(w http.ResponseWriter, n int) (rc *http.ResponseController, done func()) {
	rc = http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout + time.Duration(n>>20)*time.Second))
	return rc, func() { _ = rc.SetWriteDeadline(time.Time{}) } // unsupported writers have none to reset
}

// primeRetry is the reconnection delay a prime event gives (SSE retry:
// field, SEP-1699): how long a client whose stream broke waits before it
// resumes with Last-Event-ID.
const primeRetry = time.Second

// writePrime writes a prime event: an id to resume from and the retry
// delay, with empty data, which clients do not take as a message. It is
// not flushed: [httpConn.taken] sends it once the POST's messages are the
// session's.
func writePrime(w http.ResponseWriter, id string) error {
	_, err := fmt.Fprintf(w, "event: prime\nid: %s\nretry: %d\ndata: \n\n", id, primeRetry.Milliseconds())
	return err
}

// httpPushing, when set (tests), is called by a POST carrying requests
// just before its messages are handed to the session.
var httpPushing atomic.Pointer[func(*http.Request)]

// taken sends what w holds of s so far (the headers, a prime event) once
// the POST's messages have been handed to the session: a client that
// sees its stream open may act on it (cancel the request, send the next
// one on another POST), and what it sends then must not reach the
// session before the request it answers. Flushed earlier, a
// cancellation sent at once could overtake its request, which go-sdk
// then ignored, and the call ran on unanswered.
func (c *httpConn) taken(s *httpStream, w http.ResponseWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == w {
		_ = http.NewResponseController(w).Flush()
	}
}

// lineBreak is the index of data's first CR or LF, or -1: two byte
// searches, not a loop over a set, since data may be a 100 MB result.
func lineBreak(data []byte) int {
	i := bytes.IndexByte(data, '\n')
	upTo := data
	if i >= 0 {
		upTo = data[:i]
	}
	if j := bytes.IndexByte(upTo, '\r'); j >= 0 {
		return j
	}
	return i
}
