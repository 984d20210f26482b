package frontdoor

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnections is [ConnLimit].Max when it is 0: well under a
// usual descriptor limit's headroom, far above what real clients hold.
const DefaultMaxConnections = 4096

// UnprovenShare is the share of [ConnLimit].Max that connections no
// request has proven yet may hold, when the server proves its clients:
// 1/UnprovenShare (1,024 of 4,096). A quarter is far more than the
// connections legitimate clients have open before their first request
// is read (each proves itself within milliseconds of connecting), and
// leaves three quarters to proven connections whatever a flood does.
const UnprovenShare = 4

// tooMany is written to a connection over the bound before it is closed:
// the client reads why instead of a reset.
const tooMany = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nContent-Length: 78\r\n\r\nscratchpad-mcp: too many open connections ([http] max_connections); try again\n"

// ConnLimit configures [LimitConnections].
type ConnLimit struct {
	// Max bounds the connections open at once. 0 means
	// [DefaultMaxConnections].
	Max int
	// Proving says the server authenticates its clients (bearer tokens):
	// a connection starts unproven, and a request of it that passes the
	// front door's check proves it ([ProveConnection]). Unproven
	// connections may hold at most Max/[UnprovenShare] places; past
	// that, or when all Max are taken, a newcomer takes the place of the
	// oldest unproven connection (one that sent nothing first) once that
	// one has had minUnprovenAge (100 ms) to prove itself; until then the
	// newcomer, and the accept queue behind it, wait. Only when every
	// place is a proven connection's is a newcomer refused. false: one
	// bound for all, as before: without tokens there is nothing to prove.
	Proving bool
}

// LimitConnections bounds the connections ln keeps open at once: one over
// the bound is answered 503 and closed at once, so a flood of sockets
// cannot take every descriptor the sessions already open need. Who sends
// a connection is only known from its requests: with [ConnLimit].Proving,
// a connection no request has proven yet ([ProveConnection]) is one of a
// bounded share, the oldest of which a newcomer replaces, so that a
// flood of silent sockets holds that share at most and never locks out a
// client that proves itself at its first request. The http.Server
// serving the listener must set ConnContext to the listener's
// [ConnListener.ConnContext]. Per owner, sessions are bounded
// ([StreamableHTTPOptions].MaxSessionsPerOwner).
func LimitConnections(ln net.Listener, lim ConnLimit, log *slog.Logger) *ConnListener {
	if lim.Max <= 0 {
		lim.Max = DefaultMaxConnections
	}
	if log == nil {
		log = slog.Default()
	}
	l := &ConnListener{Listener: ln, max: lim.Max, maxUnproven: lim.Max, log: log}
	if lim.Proving {
		l.maxUnproven = max(1, lim.Max/UnprovenShare)
	}
	return l
}

// ConnListener is a listener bounding its connections
// ([LimitConnections]).
type ConnListener struct {
	net.Listener
	max, maxUnproven int
	log              *slog.Logger
	warned, evicted  atomic.Int64 // unix seconds of the last warning of each kind

	mu   sync.Mutex
	open int // counted connections, proven or not
	// The unproven connections, each list oldest first: quiet ones
	// (nothing came from them yet), closed first for a newcomer, then
	// those that sent something but no request that proved them.
	quiet, talking connList
}

// connState is where a connection is in its proof.
type connState int

const (
	stateQuiet connState = iota
	stateTalking
	stateProven
	stateGone // closed, its place given back
)

// minUnprovenAge is how long an unproven connection keeps its place
// before a newcomer may take it: time for a client to send its
// first request, which it does as it connects (microseconds on a local
// link, a round trip at most on a slow one). It also paces a flood that
// reopens every socket it loses: the unproven share turns over once per
// minUnprovenAge at most, and the flood's new sockets wait in the
// kernel's accept queue in order, like everyone's, instead of taking the
// place of a client that just connected.
const minUnprovenAge = 100 * time.Millisecond

// Accept implements [net.Listener].
func (l *ConnListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitConn{Conn: c, l: l}
		var evict *limitConn
		ok := false
		for {
			if l.maxUnproven < l.max && !lc.spoke.Load() && spoke(c) {
				// Its request is there already: not a silent socket.
				lc.spoke.Store(true)
			}
			var wait time.Duration
			l.mu.Lock()
			evict, ok, wait = l.admit(lc, time.Now())
			l.mu.Unlock()
			if wait <= 0 {
				break
			}
			// Every place an unproven connection holds is younger than
			// minUnprovenAge: the newcomer waits for the oldest to come
			// of age, and the accept queue behind it waits too.
			time.Sleep(wait)
		}
		if evict != nil {
			if now := time.Now().Unix(); l.evicted.Swap(now) != now {
				l.log.Warn("connection closed for a newcomer: the connections without a valid token hold their share of [http] max_connections",
					"unproven_max", l.maxUnproven, "max_connections", l.max, "remote", evict.RemoteAddr().String())
			}
			_ = evict.Conn.Close()
		}
		if ok {
			return lc, nil
		}
		if now := time.Now().Unix(); l.warned.Swap(now) != now {
			l.log.Warn("connection refused: too many open", "max_connections", l.max, "remote", c.RemoteAddr().String())
		}
		go refuseConn(c)
	}
}

// admit counts c in, or says no, or makes room for it by giving up the
// oldest unproven connection, which the caller closes: the oldest quiet
// one (nothing came from it), else the oldest that spoke without
// proving itself; or, when that one is younger than minUnprovenAge,
// says how long to wait before asking again. A client proves itself with
// its first request, sent as it connects, so the connections given up
// are a flood's, and a newcomer keeps its place long enough to prove
// itself. The caller holds l.mu.
func (l *ConnListener) admit(c *limitConn, now time.Time) (evict *limitConn, ok bool, wait time.Duration) {
	if l.open >= l.max || l.quiet.n+l.talking.n >= l.maxUnproven {
		if l.maxUnproven == l.max {
			return nil, false, 0 // one bound for all: nobody is given up
		}
		switch {
		case l.quiet.n > 0:
			evict = l.quiet.head
		case l.talking.n > 0:
			evict = l.talking.head
		default:
			return nil, false, 0 // every place is a proven connection's
		}
		if age := now.Sub(evict.since); age < minUnprovenAge {
			return nil, false, minUnprovenAge - age
		}
		l.release(evict)
	}
	l.open++
	c.since = now // its time to prove itself starts when it has its place
	switch {
	case l.maxUnproven == l.max:
		c.state = stateProven // nothing to prove
	case c.spoke.Load():
		c.state = stateTalking
		l.talking.push(c)
	default:
		l.quiet.push(c)
	}
	return evict, true, 0
}

// release gives c's place back, once. The caller holds l.mu.
func (l *ConnListener) release(c *limitConn) {
	if l.list(c.state) != nil {
		l.list(c.state).remove(c)
	}
	if c.state != stateGone {
		c.state = stateGone
		l.open--
	}
}

func (l *ConnListener) list(s connState) *connList {
	switch s {
	case stateQuiet:
		return &l.quiet
	case stateTalking:
		return &l.talking
	}
	return nil
}

// move puts an unproven c in state to (later states only).
func (l *ConnListener) move(c *limitConn, to connState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.state >= to || c.state >= stateProven {
		return
	}
	l.list(c.state).remove(c)
	c.state = to
	if ls := l.list(to); ls != nil {
		ls.push(c)
	}
}

// connKey holds a request's connection in its context.
type connKey struct{}

// ConnContext is for http.Server.ConnContext: it lets [ProveConnection]
// find a request's connection.
func (l *ConnListener) ConnContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitConn); ok && lc.l == l {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// ProveConnection marks the connection a request came on, by the
// request's context, as proven: the request passed the front door's
// bearer check, so the connection is no longer one of the unproven share
// ([ConnLimit].Proving). It does nothing for a connection of no
// [ConnListener].
func ProveConnection(ctx context.Context) {
	if c, ok := ctx.Value(connKey{}).(*limitConn); ok && !c.proven.Load() {
		c.proven.Store(true)
		c.l.move(c, stateProven)
	}
}

// refuseConn answers a connection over the bound and closes it, bounded in
// time: a peer that does not read cannot hold it.
func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, tooMany)
	_ = c.Close()
}

// limitConn is a counted connection: it notes when it first brings
// bytes, and gives its place back once, when closed.
type limitConn struct {
	net.Conn
	l *ConnListener

	spoke, proven atomic.Bool // fast paths; the state is under l.mu
	since         time.Time   // given its place

	state      connState // under l.mu
	prev, next *limitConn
}

func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoke.Load() {
		c.spoke.Store(true)
		c.l.move(c, stateTalking)
	}
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
	return err
}

// connList is a list of connections, oldest first.
type connList struct {
	head, tail *limitConn
	n          int
}

func (ls *connList) push(c *limitConn) {
	c.prev, c.next = ls.tail, nil
	if ls.tail != nil {
		ls.tail.next = c
	} else {
		ls.head = c
	}
	ls.tail = c
	ls.n++
}

func (ls *connList) remove(c *limitConn) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		ls.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		ls.tail = c.prev
	}
	c.prev, c.next = nil, nil
	ls.n--
}
