package budget

import (
	"path/filepath"
	"testing"
)

// BenchmarkTryChargeParallel measures the check-and-charge every
// exploration result pays, under contention from parallel calls.
func BenchmarkTryChargeParallel(b *testing.B) {
	a := NewAgent(Identity{}, Unlimited, 0)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.TryCharge(7)
		}
	})
}

// BenchmarkFinish measures appending one usage record (open, write,
// fsync, close) with one subscriber.
func BenchmarkFinish(b *testing.B) {
	e := NewEvents(filepath.Join(b.TempDir(), "mem"))
	ch, cancel := e.Subscribe()
	defer cancel()
	go func() {
		for range ch {
		}
	}()
	for b.Loop() {
		if err := e.Finish(busyAgent("w")); err != nil {
			b.Fatal(err)
		}
	}
}
