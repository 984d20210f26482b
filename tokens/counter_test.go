package tokens

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestForModel(t *testing.T) {
	tests := []struct {
		provider, model, want string
	}{
		{"openai", "gpt-4o", O200kBase},
		{"openai", "gpt-4o-mini-2024-07-18", O200kBase},
		{"openai", "gpt-4.1-nano", O200kBase},
		{"openai", "gpt-5", O200kBase},
		{"", "o3-mini", O200kBase},
		{"", "o1", O200kBase},
		{"", "o4-mini", O200kBase},
		{"openai", "gpt-4", CL100kBase},
		{"openai", "gpt-4-turbo-2024-04-09", CL100kBase},
		{"", "GPT-3.5-Turbo", CL100kBase},
		{"azure", "gpt-35-turbo", CL100kBase},
		{"openrouter", "openai/gpt-4", CL100kBase},
		{"openrouter", "openai/gpt-4o", O200kBase},
		{"anthropic", "some-future-model", "cl100k_base*1.1 (anthropic approximation)"},
		{"", "claude-sonnet-4-20250514", "cl100k_base*1.1 (anthropic approximation)"},
		{"openrouter", "anthropic/claude-sonnet-4", "cl100k_base*1.1 (anthropic approximation)"},
		{"bedrock", "us.anthropic.claude-3-5-sonnet-20240620-v1:0", "cl100k_base*1.1 (anthropic approximation)"},
		{"google", "gemini-2.5-pro", Gemma3},
		{"", "gemini-2.0-flash", Gemma3},
		{"openrouter", "google/gemini-2.5-flash", Gemma3},
		{"", "models/gemini-1.5-pro", Gemma3},
		{"", "Gemma-3-27b-it", Gemma3},
		{"ollama", "gemma3:4b", Gemma3},
		{"gemini", "", Gemma3},
		{"vertex", "some-tuned-endpoint", Gemma3},
		{"vertex", "claude-sonnet-4@20250514", "cl100k_base*1.1 (anthropic approximation)"},
		{"GOOGLE", "", Gemma3},
		{"", "llama-3.1-70b", O200kBase},
		{"openai", "ft:gpt-4o-mini-2024-07-18:acme::abc123", O200kBase},
		{"openai", "ft:gpt-3.5-turbo-0125:acme::abc123", CL100kBase},
		{"", "", O200kBase},
	}
	for _, tt := range tests {
		if got := ForModel(tt.provider, tt.model).Name(); got != tt.want {
			t.Errorf("ForModel(%q, %q) = %s, want %s", tt.provider, tt.model, got, tt.want)
		}
	}
}

func TestForEncoding(t *testing.T) {
	for _, name := range Encodings() {
		c, err := ForEncoding(name)
		if err != nil || c == nil {
			t.Fatalf("ForEncoding(%q): %v", name, err)
		}
	}
	for _, name := range []string{"", "p50k_base", "O200K_BASE", "Gemma3", "gemma"} {
		_, err := ForEncoding(name)
		if !errors.Is(err, ErrUnknownEncoding) {
			t.Errorf("ForEncoding(%q) error = %v, want ErrUnknownEncoding", name, err)
		}
	}
}

func TestCountSmall(t *testing.T) {
	o, _ := ForEncoding(O200kBase)
	cl, _ := ForEncoding(CL100kBase)
	a, _ := ForEncoding(Claude)
	tests := []struct {
		in             string
		o200k, cl100k  int
		anthropicScale int
	}{
		{"", 0, 0, 0},
		{"hello world", 2, 2, 3},
		{"\x00", 1, 1, 2},
		{"\xff\xff\xff", 1, 1, 2},  // three U+FFFD are one token (tiktoken: 1 and 1)
		{"<|endoftext|>", 7, 7, 8}, // special tokens are plain text (tiktoken: 7 and 7)
	}
	for _, tt := range tests {
		if got := o.CountString(tt.in); got != tt.o200k {
			t.Errorf("o200k %q = %d, want %d", tt.in, got, tt.o200k)
		}
		if got := cl.CountString(tt.in); got != tt.cl100k {
			t.Errorf("cl100k %q = %d, want %d", tt.in, got, tt.cl100k)
		}
		if got := a.CountString(tt.in); got != tt.anthropicScale {
			t.Errorf("claude %q = %d, want %d", tt.in, got, tt.anthropicScale)
		}
	}
}

// bigText builds a deterministic multi-MB JSON-like listing, the shape of
// the outputs the product diverts.
func bigText(minBytes int) []byte {
	var buf bytes.Buffer
	buf.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n")
	for i := 0; buf.Len() < minBytes; i++ {
		if i > 0 {
			buf.WriteString(",\n")
		}
		writeK8sItem(&buf, i)
	}
	buf.WriteString("\n    ],\n    \"kind\": \"List\"\n}\n")
	return buf.Bytes()
}

// TestCountParallelMatchesReference counts a 3 MiB listing on all cores
// (GOMAXPROCS permitting) and one core; both must equal tiktoken's count,
// recorded with ../shared/bench/tokref on the output of bigText(3 << 20).
func TestCountParallelMatchesReference(t *testing.T) {
	text := bigText(3 << 20)
	for _, tt := range []struct {
		name string
		want int
	}{{O200kBase, 648933}, {CL100kBase, 639039}} {
		e, _ := mustLazy(tt.name).get()
		if seq := e.countSeq(text, nil, 0); seq != tt.want {
			t.Errorf("%s: sequential %d, tiktoken %d", tt.name, seq, tt.want)
		}
		if par := e.count(text, 0, runtime.GOMAXPROCS(0)); par != tt.want {
			t.Errorf("%s: parallel %d, tiktoken %d", tt.name, par, tt.want)
		}
	}
}

func TestAtLeast(t *testing.T) {
	text := bigText(1 << 20)
	for _, name := range Encodings() {
		c, _ := ForEncoding(name)
		n := c.Count(text)
		small := []byte("hello world")
		ns := c.Count(small)
		bad := []byte("\xff\xff\xff")
		nbad := c.Count(bad)
		tests := []struct {
			b    []byte
			n    int
			want bool
		}{
			{text, n, true},
			{text, n + 1, false},
			{text, n - 1, true},
			{text, 1, true},
			{text, 0, true},
			{text, -5, true},
			{text, len(text) * 4, false}, // more than any count: answered from the length
			{small, ns, true},
			{small, ns + 1, false},
			{nil, 0, true},
			{nil, 1, false},
			{bad, nbad, true}, // 3 bytes, but ill-formed: not answered from the length
			{bad, nbad + 1, false},
		}
		for _, tt := range tests {
			if got := c.AtLeast(tt.b, tt.n); got != tt.want {
				t.Errorf("%s AtLeast(%d bytes, %d) = %v, want %v (count %d)", name, len(tt.b), tt.n, got, tt.want, c.Count(tt.b))
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	c, _ := ForEncoding(O200kBase)
	inputs := [][]byte{
		nil,
		{},
		bytes.Repeat([]byte{0}, 100000),
		bytes.Repeat([]byte{0xff}, 100000),
		bytes.Repeat([]byte{0xe2, 0x82}, 50000),
		bytes.Repeat([]byte(" "), maxPiece*2+17), // one whitespace piece, windowed
		bytes.Repeat([]byte("é"), maxPiece+3),    // one letter piece with multi-byte runes
		[]byte(strings.Repeat("\xf0\x9f\x98", 1000)), // truncated emoji
		bytes.Repeat([]byte{0xff}, maxPiece*2+5),     // one ill-formed piece, windowed
	}
	for i, in := range inputs {
		n := c.Count(in)
		if n < 0 || (len(in) > 0 && n == 0) {
			t.Errorf("input %d (%d bytes): count %d", i, len(in), n)
		}
	}
}

// TestHugePieceMemory checks that one enormous piece (1 MiB of '=' for
// o200k_base; 1 MiB of "ab", every pair joining, for Gemma 3) is counted
// in bounded scratch memory, not memory proportional to it.
func TestHugePieceMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("counts 1 MiB through the heap merge")
	}
	for _, tc := range []struct {
		enc string
		in  []byte
	}{
		{O200kBase, bytes.Repeat([]byte("="), 1<<20)},
		{Gemma3, bytes.Repeat([]byte("ab"), 1<<19)},
	} {
		t.Run(tc.enc, func(t *testing.T) {
			c, _ := ForEncoding(tc.enc)
			c.Count(nil)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			n := c.Count(tc.in)
			runtime.ReadMemStats(&after)
			if n <= 0 || n > len(tc.in) {
				t.Fatalf("count %d", n)
			}
			// Scratch for one maxPiece window is ~10 MiB; memory
			// proportional to the piece would be ~40 MiB.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 24<<20 {
				t.Errorf("allocated %d MiB for a 1 MiB piece", grew>>20)
			}
		})
	}
}

func TestZeroCounter(t *testing.T) {
	var zero Counter
	var nilc *Counter
	for _, c := range []*Counter{&zero, nilc} {
		if got := c.CountString("hello world"); got != 2 {
			t.Errorf("Count = %d, want 2", got)
		}
		if c.Name() != O200kBase || !c.AtLeast([]byte("hello world"), 2) {
			t.Errorf("Name %q", c.Name())
		}
		c.Preload()
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	// Many goroutines racing the first load and counting at once.
	c := ForModel("openai", "gpt-4o")
	c.Preload()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := c.CountString("hello world"); got != 2 {
				t.Errorf("got %d", got)
			}
		}()
	}
	wg.Wait()
}

// TestCountChunkedWorkers: a count runs on no more goroutines at once than
// it is given (CountReader, the background counts, gives one), and on
// more when it may.
func TestCountChunkedWorkers(t *testing.T) {
	b := bytes.Repeat([]byte("word "), 4*parallelMin)
	for _, workers := range []int{1, 2, 4} {
		var running, most atomic.Int64
		two := make(chan struct{}) // closed once two ran at once
		deadline := time.Now().Add(10 * time.Second)
		var once sync.Once
		seq := func(p []byte, total *atomic.Int64, limit int64) int {
			n := running.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			if n >= 2 {
				once.Do(func() { close(two) })
			}
			if workers > 1 {
				// Held until a second runs beside it: given more than
				// one, the count must start one (bounded, so a count
				// that never does fails instead of hanging).
				select {
				case <-two:
				case <-time.After(time.Until(deadline)):
				}
			}
			running.Add(-1)
			total.Add(int64(len(p)))
			return len(p)
		}
		if got := countChunked(b, 0, workers, func(b []byte, at int) int { return at }, seq); got != len(b) {
			t.Fatalf("%d workers: counted %d, want %d", workers, got, len(b))
		}
		if m := most.Load(); m > int64(workers) || workers > 1 && m < 2 {
			t.Fatalf("%d workers: %d ran at once", workers, m)
		}
	}
}
