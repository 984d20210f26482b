package state

import (
	"context"
	"math"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// BenchmarkTryAdd is the cost of one charge: a mutex for Local, one
// script round trip for Redis. Parallel, as charges of many requests are.
func BenchmarkTryAdd(b *testing.B) {
	for _, be := range []struct {
		name string
		open func(b *testing.B) Counters
	}{
		{"local", func(*testing.B) Counters { return NewLocal(LocalOptions{}) }},
		{"redis", func(b *testing.B) Counters { return openRedis(b, testredis.Start(b).URL()) }},
	} {
		b.Run(be.name, func(b *testing.B) {
			c := be.open(b)
			ctx := context.Background()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, ok, err := c.TryAdd(ctx, "agent", "tokens", 1, math.MaxInt64); err != nil || !ok {
						b.Errorf("TryAdd = %v, %v", ok, err)
						return
					}
				}
			})
		})
	}
}
