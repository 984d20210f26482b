package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// BenchmarkFetchBlob measures a replica's first read of a 24 MiB stored
// output: the chunks from Redis, the checks, the atomic write. Each
// iteration removes the file first so the fetch downloads again.
func BenchmarkFetchBlob(b *testing.B) {
	const size = 24 << 20
	srv := testredis.Start(b)
	a, _ := newRedisStore(b, srv, 0)
	r, dir := newRedisStore(b, srv, 0)
	ctx := context.Background()
	name := "owners/alice/run-1/iteration-0/scratchpad/big.json"
	if err := a.PutBlob(ctx, name, randomBytes(size, 1), 0); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, filepath.FromSlash(name))
	b.SetBytes(size)
	for b.Loop() {
		b.StopTimer()
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := r.FetchBlob(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
}
