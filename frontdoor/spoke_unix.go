//go:build unix

package frontdoor

import (
	"net"
	"syscall"
)

// spoke reports whether bytes from the peer wait on c already, without
// reading them (MSG_PEEK on the non-blocking socket): a client that sent
// its request as it connected is known to have spoken as soon as it is
// accepted, before the server's goroutine for it first reads.
func spoke(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var n int
	var buf [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		n, _, _ = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK)
		return true // never wait: EAGAIN means nothing came yet
	})
	return n > 0
}
