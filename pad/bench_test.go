package pad

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkAppend(b *testing.B) {
	p, _ := Open(filepath.Join(b.TempDir(), "pad"), Options{})
	note := strings.Repeat("n", 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Append(note, []string{"bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendParallel(b *testing.B) {
	p, _ := Open(filepath.Join(b.TempDir(), "pad"), Options{})
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

// BenchmarkUpdate is one full durable save: lock, read, patch, temp write,
// fsync, rename, fsync dir, history.
func BenchmarkUpdate(b *testing.B) {
	p, _ := Open(filepath.Join(b.TempDir(), "pad"), Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := p.Update([]Patch{{Section: "Next", Op: OpReplace, Content: fmt.Sprint("step ", i)}})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead renders a full pad with a 1000-entry ledger folded to
// max_tokens, the per-turn cost.
func BenchmarkRead(b *testing.B) {
	p, _ := Open(filepath.Join(b.TempDir(), "pad"), Options{MaxTokens: 2000})
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
