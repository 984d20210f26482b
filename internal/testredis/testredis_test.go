package testredis

import "testing"

// The helper itself: a server answers, is gone after Kill and answers
// again on the same address after Restart.
func TestStartKillRestart(t *testing.T) {
	s := Start(t)
	if err := ping(s.Addr); err != nil {
		t.Fatalf("fresh server: %v", err)
	}
	addr := s.Addr
	s.Kill()
	if err := ping(addr); err == nil {
		t.Fatal("killed server still answers")
	}
	s.Restart()
	if s.Addr != addr {
		t.Fatalf("restarted on %s, want %s", s.Addr, addr)
	}
	if err := ping(s.Addr); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}

// Two servers in one test get different ports.
func TestTwoServers(t *testing.T) {
	a, b := Start(t), Start(t)
	if a.Addr == b.Addr {
		t.Fatalf("both on %s", a.Addr)
	}
}
