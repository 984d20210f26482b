package pad

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// Each benchmark runs on both backends: files in a temp directory (with
// fsync), and a local redis-server on loopback without persistence (what
// a call costs in round trips and scripts, not in network distance).
var benchBackends = []struct {
	name string
	open func(b *testing.B, opts Options) *Pad
}{
	{"file", func(b *testing.B, opts Options) *Pad {
		p, err := Open(filepath.Join(b.TempDir(), "pad"), opts)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}},
	{"redis", func(b *testing.B, opts Options) *Pad {
		p, err := newRedisEnv(b).conn(b, RedisOptions{}).Open("run:bench", opts)
		if err != nil {
			b.Fatal(err)
		}
		return p
	}},
}

func forEachBenchBackend(b *testing.B, opts Options, fn func(b *testing.B, p *Pad)) {
	for _, bb := range benchBackends {
		b.Run(bb.name, func(b *testing.B) { fn(b, bb.open(b, opts)) })
	}
}

func BenchmarkAppend(b *testing.B) {
	note := strings.Repeat("n", 200)
	forEachBenchBackend(b, Options{}, func(b *testing.B, p *Pad) {
		for b.Loop() {
			if _, err := p.Append(note, []string{"bench"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendParallel(b *testing.B) {
	note := strings.Repeat("n", 200)
	forEachBenchBackend(b, Options{}, func(b *testing.B, p *Pad) {
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := p.Append(note, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkUpdate is one full save: on files lock, read, patch, temp
// write, fsync, rename, fsync dir, history; on Redis lock, read, history
// top, patch, the fenced commit script, unlock.
func BenchmarkUpdate(b *testing.B) {
	forEachBenchBackend(b, Options{}, func(b *testing.B, p *Pad) {
		i := 0
		for b.Loop() {
			i++
			if _, err := p.Update([]Patch{{Section: "Next", Op: OpReplace, Content: fmt.Sprint("step ", i)}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRead renders a full pad with a 1000-entry ledger folded to
// max_tokens, the per-turn cost.
func BenchmarkRead(b *testing.B) {
	forEachBenchBackend(b, Options{MaxTokens: 2000}, func(b *testing.B, p *Pad) {
		for _, s := range DefaultSections() {
			p.Update([]Patch{{Section: s.Name, Op: OpAppend, Content: strings.Repeat("w", s.Cap/2)}})
		}
		for i := 0; i < 1000; i++ {
			p.Append(fmt.Sprintf("finding %d: %s", i, strings.Repeat("f", 80)), nil)
		}
		for b.Loop() {
			if _, err := p.Read(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
