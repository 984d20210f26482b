package server

import (
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxConnections is [LimitConnections]'s bound when none is
// configured: well under a usual descriptor limit's headroom, far above
// what real clients hold.
const DefaultMaxConnections = 4096

// tooMany is written to a connection over the bound before it is closed:
// the client reads why instead of a reset.
const tooMany = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nContent-Length: 78\r\n\r\nscratchpad-mcp: too many open connections ([http] max_connections); try again\n"

// LimitConnections bounds the connections ln keeps open at once to max
// (0 means [DefaultMaxConnections]): one over the bound is answered 503
// and closed at once, so a flood of sockets cannot take every descriptor
// the sessions already open need. Who sends a connection is only known
// from its requests, so the bound is the whole server's; per owner,
// sessions are bounded ([StreamableHTTPOptions].MaxSessionsPerOwner).
func LimitConnections(ln net.Listener, max int, log *slog.Logger) net.Listener {
	if max <= 0 {
		max = DefaultMaxConnections
	}
	if log == nil {
		log = slog.Default()
	}
	return &limitListener{Listener: ln, max: int64(max), log: log}
}

type limitListener struct {
	net.Listener
	max    int64
	open   atomic.Int64
	log    *slog.Logger
	warned atomic.Int64 // unix seconds of the last warning
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &limitConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		if now := time.Now().Unix(); l.warned.Swap(now) != now {
			l.log.Warn("connection refused: too many open", "max_connections", l.max, "remote", c.RemoteAddr().String())
		}
		go refuseConn(c)
	}
}

// refuseConn answers a connection over the bound and closes it, bounded in
// time: a peer that does not read cannot hold it.
func refuseConn(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = io.WriteString(c, tooMany)
	_ = c.Close()
}

// limitConn gives its place back once, when closed.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
