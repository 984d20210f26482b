package pad

import (
	"fmt"
	"strings"
	"testing"
)

// The Redis counterparts of bench_test.go's benchmarks, against a local
// redis-server on loopback (no persistence): what a call costs in round
// trips and scripts, not in network distance.

func redisBenchPad(b *testing.B, id string, opts Options) *Pad {
	b.Helper()
	env := newRedisEnv(b)
	p, err := env.conn(b, RedisOptions{}).Open(id, opts)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkRedisAppend(b *testing.B) {
	p := redisBenchPad(b, "run:bench", Options{})
	note := strings.Repeat("n", 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Append(note, []string{"bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRedisAppendParallel(b *testing.B) {
	p := redisBenchPad(b, "run:bench", Options{})
	note := strings.Repeat("n", 200)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Append(note, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRedisUpdate is one full fenced save: lock, read, history top,
// patch, the commit script, unlock.
func BenchmarkRedisUpdate(b *testing.B) {
	p := redisBenchPad(b, "run:bench", Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := p.Update([]Patch{{Section: "Next", Op: OpReplace, Content: fmt.Sprint("step ", i)}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisRead renders a full pad with a 1000-entry ledger folded
// to max_tokens, the per-turn cost.
func BenchmarkRedisRead(b *testing.B) {
	p := redisBenchPad(b, "run:bench", Options{MaxTokens: 2000})
	for _, s := range DefaultSections() {
		p.Update([]Patch{{Section: s.Name, Op: OpAppend, Content: strings.Repeat("w", s.Cap/2)}})
	}
	for i := 0; i < 1000; i++ {
		p.Append(fmt.Sprintf("finding %d: %s", i, strings.Repeat("f", 80)), nil)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Read(nil); err != nil {
			b.Fatal(err)
		}
	}
}
