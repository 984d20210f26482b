//go:build !unix

package testredis

// Pause is not available on this system: the test is skipped.
func (s *Server) Pause() { s.tb.Skip("testredis: pausing a process needs SIGSTOP") }

// Resume does nothing here.
func (s *Server) Resume() {}
