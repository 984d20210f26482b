//go:build unix

package testredis

import "syscall"

// Pause stops the server's process (SIGSTOP) without closing its sockets:
// commands sent meanwhile wait in them, and run once [Server.Resume] is
// called, as with a Redis stalled by a long fork or a paused VM.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Signal(sig)
	}
}
