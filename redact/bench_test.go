package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// Benchmarks: redaction's cost in MB/s on 24 MB of clean tool output (a
// pod listing and a service log, each the text of one tools/call result),
// on secret-dense text, and a plain bytes.Index pass over the same bytes
// as the floor.

const benchSize = 24 << 20

var benchData = sync.OnceValue(func() map[string][]byte {
	r := rand.New(rand.NewPCG(7, 7))
	m := map[string][]byte{}
	var k8s strings.Builder
	for k8s.Len() < benchSize {
		k8s.WriteString(k8sListing(r, 200))
	}
	m["k8s"] = toolResult(k8s.String())[:benchSize]
	m["k8s"] = toolResult(k8s.String()[:benchSize-(len(m["k8s"])-benchSize)/2])
	var logs strings.Builder
	for logs.Len() < benchSize {
		logs.WriteString(strings.Join(logLines(r, 3000), "\n"))
		logs.WriteByte('\n')
	}
	m["log"] = toolResult(logs.String()[:benchSize*9/10])
	// Dense: one planted secret (every default kind in turn) every ~400
	// bytes of log.
	var dense strings.Builder
	lines := logLines(r, 3000)
	for i := 0; dense.Len() < benchSize/4; i++ {
		dense.WriteString(lines[i%len(lines)])
		dense.WriteByte('\n')
		if i%3 == 0 {
			dense.WriteString(plant(r, plantedKinds[i/3%len(plantedKinds)]).Text)
			dense.WriteByte('\n')
		}
	}
	m["dense"] = toolResult(dense.String())
	return m
})

func benchJSON(b *testing.B, name string, mode Mode) {
	src := benchData()[name]
	red, err := New(Options{Mode: mode})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, 0, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		out, _, err := red.JSON(dst[:0], src)
		if err != nil {
			b.Fatal(err)
		}
		_ = out
	}
}

func BenchmarkRedactCleanK8s(b *testing.B)  { benchJSON(b, "k8s", Mask) }
func BenchmarkRedactCleanLog(b *testing.B)  { benchJSON(b, "log", Mask) }
func BenchmarkRedactDenseMask(b *testing.B) { benchJSON(b, "dense", Mask) }
func BenchmarkRedactDenseFlag(b *testing.B) { benchJSON(b, "dense", Flag) }

// BenchmarkFloorIndex is one bytes.Index (Contains) pass for a keyword that is not
// there: the least any scan of the bytes costs.
func BenchmarkFloorIndex(b *testing.B) {
	src := benchData()["k8s"]
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if bytes.Contains(src, []byte("ghp_")) {
			b.Fatal("found")
		}
	}
}

// BenchmarkFloorIndexByte is one bytes.IndexByte pass for a byte that is
// not there: memory bandwidth.
func BenchmarkFloorIndexByte(b *testing.B) {
	src := benchData()["k8s"]
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if bytes.IndexByte(src, 0) >= 0 {
			b.Fatal("found")
		}
	}
}
