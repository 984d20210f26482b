package divert

import (
	"encoding/json"
	"log/slog"
	"os"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// The parts of diverting a ~20 MB JSON listing (80,000 items), without
// token counting (package tokens has its own benchmarks):
//
//	go test -run XXX -bench 'Save|Pointer' -benchtime 5x ./divert/
//
// The listing is built inside each benchmark, not at package init: this
// test binary is also re-executed as the upstream of every test.

func BenchmarkSave20MB(b *testing.B) {
	listing20MB := testupstream.Listing(80000)
	dir := b.TempDir()
	b.SetBytes(int64(len(listing20MB)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := Save(memdir.At(dir), "k8s", "list_pods", listing20MB)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = removeFile(st.Path)
		b.StartTimer()
	}
}

func BenchmarkPointer20MB(b *testing.B) {
	listing20MB := testupstream.Listing(80000)
	st := Stored{Name: "k8s-list_pods-00000000.json", Format: FormatJSON, Bytes: len(listing20MB)}
	b.SetBytes(int64(len(listing20MB)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = Pointer{Server: "k8s", Tool: "list_pods", Stored: st, Tokens: 1, Threshold: 1}.Text(listing20MB)
	}
}

func removeFile(path string) error { return os.Remove(path) }

// BenchmarkDecide is the whole divert path of a ~24 MB tools/call result
// (the bench upstream's JSON listing as one text block): scan, threshold,
// pretty-printed atomic write, sketch, pointer; token counting included
// (the exact count of the whole runs in the background; the benchmark
// waits for it between runs, untimed). Its CPU profile is in NOTES:
//
//	go test -run XXX -bench Decide -benchtime 5x -cpuprofile /tmp/divert.prof ./divert/
//	go tool pprof -top -nodecount 15 /tmp/divert.prof
func BenchmarkDecide(b *testing.B) {
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": testupstream.Blob("json", 24)}}})
	counted := make(chan int, 1)
	a := &Agent{Enabled: true, Dir: b.TempDir(), Counter: tokens.ForModel("openai", "gpt-4o"), Account: funcs{intercepted: func(n int) { counted <- n }}}
	// "copy": a caller that keeps its result; "proxy": as the proxy calls
	// it, over bytes it gives away and the upstream client validated.
	for _, proxy := range []bool{false, true} {
		b.Run(map[bool]string{false: "copy", true: "proxy"}[proxy], func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			own := make([]byte, len(raw))
			for i := 0; i < b.N; i++ {
				result := raw
				if proxy {
					b.StopTimer()
					copy(own, raw)
					result = own
					b.StartTimer()
				}
				out, err := Decide(Call{Server: "b", Tool: "blob", Threshold: 1000, Result: result, Owned: proxy, Valid: proxy}, a, Options{Logger: slog.New(slog.DiscardHandler)})
				if err != nil || !out.Diverted {
					b.Fatal(err)
				}
				b.StopTimer()
				<-counted // the background count, not timed
				_ = removeFile(out.Pointer.Stored.Path)
				b.StartTimer()
			}
		})
	}
}
