package artifacts

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// BenchmarkReadArtifact measures read_artifact (the tool's handler,
// returning the file inline) on a directory store and on a Redis store on
// loopback, and reports the median call as p50-µs.
//
//	go test -run '^$' -bench ReadArtifact -benchtime 2000x ./artifacts/
func BenchmarkReadArtifact(b *testing.B) {
	srv := testredis.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer c.Close()
	for _, size := range []int{4 << 10, 64 << 10} {
		content := strings.Repeat("0123456789abcde\n", size/16)
		for _, backend := range []string{"file", "redis"} {
			b.Run(backend+"/"+sizeName(size), func(b *testing.B) {
				var s *Store
				var err error
				if backend == "file" {
					s, err = Open(memdir.At(b.TempDir()))
				} else {
					s, err = OpenRedis(c, layout.ArtifactsKey("bench", "", sizeName(size)), memdir.At(filepath.Join(b.TempDir(), layout.ArtifactsDir)))
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Write("notes.md", content); err != nil {
					b.Fatal(err)
				}
				env := &Env{Store: s, RunID: "r", Role: "worker", MaxExtractionTokens: 1 << 20}
				read := Tools(func(context.Context) (*Env, error) { return env, nil })[1]
				args, _ := json.Marshal(map[string]any{"filename": "notes.md"})
				var times []time.Duration
				b.SetBytes(int64(len(content)))
				for b.Loop() {
					t0 := time.Now()
					res := read.Handler(context.Background(), args)
					times = append(times, time.Since(t0))
					if !strings.HasPrefix(res.Text, "0123") {
						b.Fatalf("not inline: %.200s", res.Text)
					}
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
			})
		}
	}
}

func sizeName(n int) string { return strconv.Itoa(n>>10) + "KiB" }
