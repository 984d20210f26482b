package testwait

import (
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	if !Until(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Fatalf("Until stopped after %d polls", n)
	}
	if Until(0, func() bool { return false }) {
		t.Fatal("Until of a condition that never holds reported true")
	}
}
