package divert

import (
	"os"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
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
		st, err := Save(dir, "k8s", "list_pods", listing20MB)
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
