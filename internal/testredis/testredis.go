// Package testredis runs a real redis-server for a test: a child process
// on a free loopback port, with no persistence, in a temporary directory,
// killed when the test ends. Tests of the pad's Redis backend use it
// instead of a mock, so what they check is what Redis does.
//
// The redis-server binary must be on PATH; scripts/deps.sh (run by make
// test) installs it. Without it the test fails, not skips: a suite that
// silently skips the Redis backend would pass for the wrong reason.
package testredis

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startWait bounds how long a server may take to answer PING. It is a
// safety net for a wedged machine, not a timing assertion.
const startWait = 20 * time.Second

// Server is one redis-server child process.
type Server struct {
	// Addr is host:port on the loopback interface.
	Addr string

	tb    testing.TB
	dir   string
	port  int
	extra []string // more redis-server arguments, kept for Restart

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *lockedBuffer
}

// Start starts a redis-server for tb and stops it when tb ends. It fails
// tb when redis-server is not installed or does not come up. extra are
// more redis-server arguments, such as "--requirepass", "secret".
func Start(tb testing.TB, extra ...string) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		tb.Fatalf("redis-server not found: run scripts/deps.sh")
	}
	s := &Server{tb: tb, dir: tb.TempDir(), extra: extra}
	// Another process may take the free port between our probe and
	// redis-server's bind: try a few ports.
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		if err = s.start(port); err == nil {
			break
		}
	}
	if err != nil {
		tb.Fatalf("testredis: %v", err)
	}
	tb.Cleanup(s.Kill)
	return s
}

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Kill stops the server at once (SIGKILL, as a crash would) and waits for
// it to exit. Its data is gone: nothing is persisted.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// Restart starts the server again on the same port after [Server.Kill],
// empty.
func (s *Server) Restart() {
	s.tb.Helper()
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		if err = s.start(s.port); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond) // the old socket may linger
	}
	s.tb.Fatalf("testredis: restart on port %d: %v", s.port, err)
}

func (s *Server) start(port int) error {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--logfile", "",
		"--loglevel", "warning",
	}
	cmd := exec.Command("redis-server", append(args, s.extra...)...)
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(startWait)
	for {
		select {
		case <-done:
			return fmt.Errorf("redis-server on port %d exited: %s", port, strings.TrimSpace(log.String()))
		default:
		}
		if ping(addr) == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("redis-server on port %d did not answer PING within %s: %s", port, startWait, strings.TrimSpace(log.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.mu.Lock()
	s.Addr, s.port, s.cmd, s.done, s.log = addr, port, cmd, done, log
	s.mu.Unlock()
	return nil
}

// ping sends PING in the inline protocol and wants +PONG back; a server
// that requires a password answers -NOAUTH, which also means it is up.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if l := strings.TrimSpace(line); l != "+PONG" && !strings.HasPrefix(l, "-NOAUTH") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockedBuffer collects the server's output, written by exec's copier
// goroutine and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
