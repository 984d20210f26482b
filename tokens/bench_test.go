package tokens

import (
	"runtime"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tiktoken-go/tokenizer"
)

// The 4 MB listing of the goal, built once.
var (
	listingOnce sync.Once
	listing     []byte
)

func listing4MB() []byte {
	listingOnce.Do(func() { listing = bigText(4 << 20) })
	return listing
}

// BenchmarkCount compares full exact counts of the 4 MB listing: this
// package (parallel and on one core) against the two Go libraries it was
// measured against, and the Gemma 3 counter (no Go library to compare;
// cpu-MB/s is the one-core speed by CPU time, for a shared machine).
func BenchmarkCount(b *testing.B) {
	text := listing4MB()
	g, err := gemma3.get()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ours/"+Gemma3, func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			g.count(text, 0, runtime.GOMAXPROCS(0))
		}
	})
	b.Run("ours-1core/"+Gemma3, func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		cpu0 := cpuTime()
		for b.Loop() {
			g.countSeq(text, nil, 0)
		}
		if cpu := cpuTime() - cpu0; cpu > 0 {
			b.ReportMetric(float64(len(text))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
		}
	})
	for _, name := range []string{O200kBase, CL100kBase} {
		c, _ := ForEncoding(name)
		e, _ := c.enc.get()
		b.Run("ours/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
		b.Run("ours-1core/"+name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				e.countSeq(text, nil, 0)
			}
		})
		b.Run("tiktoken-go-tokenizer/"+name, func(b *testing.B) {
			codec, err := tokenizer.Get(tokenizer.Encoding(name))
			if err != nil {
				b.Fatal(err)
			}
			s := string(text)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if _, err := codec.Count(s); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("pkoukk-tiktoken-go/"+name, func(b *testing.B) {
			tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
			enc, err := tiktoken.GetEncoding(name)
			if err != nil {
				b.Fatal(err)
			}
			s := string(text)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				enc.Encode(s, nil, nil)
			}
		})
	}
}

// BenchmarkLoad measures building an encoding from the embedded data, what
// the first Count waits for without Preload.
func BenchmarkLoad(b *testing.B) {
	for _, l := range []*lazyEncoding{o200kBase, cl100kBase} {
		b.Run("ours/"+l.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := loadEncoding(l.name, l.asset, l.split, l.size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLoadGemma3 measures loading Gemma 3 from the embedded data (its
// two parts load in parallel), and reports the CPU time of a load on all
// threads (cpu-ms/op) and the heap the loaded vocabulary keeps (heap-MB,
// after a GC).
func BenchmarkLoadGemma3(b *testing.B) {
	cpu0 := cpuTime()
	for b.Loop() {
		g, err := loadGemma(gemma3Data)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(g)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep, _ := loadGemma(gemma3Data)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/1e6, "heap-MB")
	runtime.KeepAlive(keep)
}

// BenchmarkCount2KB is a typical small tool result.
func BenchmarkCount2KB(b *testing.B) {
	text := listing4MB()[:2048]
	for _, name := range []string{O200kBase, CL100kBase, Gemma3} {
		c, _ := ForEncoding(name)
		c.Count(nil)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				c.Count(text)
			}
		})
	}
}

// BenchmarkAtLeast20MB is the divert decision on a 20 MB output at a
// typical threshold and at one just above the real count (the worst case:
// everything must be counted).
func BenchmarkAtLeast20MB(b *testing.B) {
	text := bigText(20 << 20)
	c, _ := ForEncoding(O200kBase)
	total := c.Count(text)
	for _, tc := range []struct {
		name string
		n    int
	}{{"threshold=25000", 25000}, {"threshold=count+1", total + 1}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				c.AtLeast(text, tc.n)
			}
		})
	}
}
