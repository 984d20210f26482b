package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// stringEndByBytes is StringEnd as a plain byte loop: the reference.
func stringEndByBytes(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`""`, `"abc"`, `"a\"b"`, `"\\"`, `"\\\""x`, `"12345678"`, `"1234567\"9012345678"`,
		`"abcdefghijklmnopqrstuvwxyz\\`, `"abcdefg\`, `"` + strings.Repeat(`{\"k\":\"v\"},`, 20) + `"`, `"ü\"€"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for i := 0; i < len(b) && i < 24; i++ {
			if got, want := StringEnd(b, i), stringEndByBytes(b, i); got != want {
				t.Fatalf("%q from %d: %d, want %d", s, i, got, want)
			}
		}
		want := -1
		for i, c := range b {
			if c == '"' || c == '\\' {
				want = i
				break
			}
		}
		if got := IndexQuoteOrBackslash(b); got != want {
			t.Fatalf("%q: IndexQuoteOrBackslash %d, want %d", s, got, want)
		}
	})
}

func BenchmarkStringEnd(b *testing.B) {
	// "short": every string of a 24 MB listing in turn, as the indenter
	// asks for them (each short, in a long input).
	t := []byte(testupstream.Blob("json", 24))
	b.Run("short", func(b *testing.B) {
		b.SetBytes(int64(len(t)))
		for b.Loop() {
			for i := 0; i < len(t); i++ {
				if t[i] == '"' {
					i = StringEnd(t, i) - 1
				}
			}
		}
	})
	for _, format := range []string{"json", "text", "ndjson"} {
		lit, _ := json.Marshal(testupstream.Blob(format, 4))
		for name, f := range map[string]func([]byte, int) int{"words": StringEnd, "bytes": stringEndByBytes} {
			b.Run(format+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(lit)))
				for b.Loop() {
					if f(lit, 0) != len(lit) {
						b.Fatal("end")
					}
				}
			})
		}
	}
}

// TestStringEndInHalves: a string long enough to be looked for in two
// halves ends where the byte loop says, whether it ends in the first MiB,
// in the first half or in the second, or not at all, and whatever run of
// backslashes the halves' edges fall in.
func TestStringEndInHalves(t *testing.T) {
	defer func(from, least int) { parallelStringFrom, parallelStringMin = from, least }(parallelStringFrom, parallelStringMin)
	parallelStringFrom, parallelStringMin = 4<<10, 16<<10 // small strings, many cases
	// Long enough for halves, and open past the first MiB but too short
	// for them (looked for on from the MiB's edge, on one core).
	for _, size := range []int{parallelStringMin + parallelStringFrom + 64, 2*parallelStringFrom + 64} {
		for _, run := range []int{0, 1, 2, 3, 4} {
			for _, endAt := range []int{parallelStringFrom - 1, parallelStringFrom + 1, size / 2, size/2 + 1, size - 3, -1} {
				b := []byte(`"` + strings.Repeat(`ab\"c`, size/5))
				b = b[:size]
				// Runs of backslashes just before the first MiB's edge and the
				// middles the halves may take, then a quote after each (an end
				// only when the run is even).
				for _, at := range []int{1 + parallelStringFrom, size / 2, (size + parallelStringFrom) / 2} {
					for k := range run + 1 {
						b[at-run+k] = '\\'
					}
					b[at+1] = '"'
					if run%2 == 0 {
						b[at+1] = 'x' // an end here only where endAt says
					}
				}
				if endAt > 0 {
					b[endAt] = '"'
					if b[endAt-1] == '\\' {
						b[endAt-1] = 'y'
					}
				}
				if got, want := StringEnd(b, 0), stringEndByBytes(b, 0); got != want {
					t.Fatalf("size %d, run %d, end at %d: %d, want %d", size, run, endAt, got, want)
				}
			}
		}
	}
}

// TestSkipSpaceIndentation: the runs of spaces after a newline, skipped
// eight at a time, end where the first other byte is, whatever the run's
// length, at the end of the input too.
func TestSkipSpaceIndentation(t *testing.T) {
	for n := 0; n < 40; n++ {
		for _, tail := range []string{"x", "\tx", " \r\nx", ""} {
			b := []byte("\n" + strings.Repeat(" ", n) + tail)
			want := bytes.IndexFunc(b, func(r rune) bool { return r != ' ' && r != '\n' && r != '\t' && r != '\r' })
			if want < 0 {
				want = len(b)
			}
			if got := SkipSpace(b, 0); got != want {
				t.Errorf("%q: %d, want %d", b, got, want)
			}
		}
	}
}
