package tokens

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func loadedGemma(t testing.TB) *gemma {
	t.Helper()
	g, err := gemma3.get()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGemmaCountSmall pins behaviours of the reference one by one: counts
// recorded with ../shared/bench/tokref gemma3 (no BOS).
func TestGemmaCountSmall(t *testing.T) {
	c, err := ForEncoding(Gemma3)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{" ", 1},
		{"  ", 1},
		{"hello world", 2},
		{" hello", 1}, // no prefix space is added, but " " is "▁"
		{"hello ", 2},
		{"Hello, World!", 4},
		{"<start_of_turn>", 1}, // special tokens are recognised in text
		{"<start_of_turn>user\nhi<end_of_turn>\n", 6},
		{"<bos>", 1},
		{"<unused0><unused6241>", 2},
		{"<unused6242>", 7}, // not a token
		{"\n", 1},
		{strings.Repeat("\n", 31), 1}, // the longest added newline run
		{strings.Repeat("\n", 32), 2},
		{strings.Repeat("\n", 40), 2},
		{strings.Repeat("\t", 33), 2},
		{"▁", 1},
		{"▁▁", 1},
		{" ▁ ", 1}, // " " and "▁" are the same after normalizing
		{"a▁b", 2},
		{"\xff", 1}, // U+FFFD
		{"<0x0A>", 6},
		{"<table><tr><td>x</td></tr></table>", 7},
		{"<div>", 1},
		{"<p>", 3},
		{"[multimodal]", 1},
		{"𝕏 😀 👨‍👩‍👧", 11},
		{"你好，世界", 3},
		{"مرحبا بالعالم", 4},
		{"\r\n", 2},
		{"\x00", 1},
		{"\ufffd", 1},
		{"\u00e9", 1},
		{"e\u0301", 2},
		{strings.Repeat("a", 112), 14},
		{"    return nil", 3},
		{"func main() {", 4},
		{"xxx          y", 3},
		{"a\xe2\x82b\xf0\x9f\x98", 4}, // truncated sequences: one U+FFFD each
	}
	for _, tt := range tests {
		if got := c.CountString(tt.in); got != tt.want {
			t.Errorf("gemma3 %q = %d, want %d (reference)", tt.in, got, tt.want)
		}
	}
}

// TestGemmaFixtureCoverage makes sure the reference counts cover what the
// issue asks for, so TestFixturesMatchReference checks gemma3 on them.
func TestGemmaFixtureCoverage(t *testing.T) {
	counts := loadCounts(t)
	random, all := 0, 0
	for file, encs := range counts {
		if _, ok := encs[Gemma3]; !ok {
			t.Errorf("%s: no gemma3 reference count", file)
			continue
		}
		all++
		if strings.HasPrefix(file, "random-unicode/") {
			random++
		}
	}
	for _, f := range []string{"prose.txt", "code.go.txt", "k8s-pretty.json", "app.log", "cjk.txt", "arabic.txt", "emoji.txt", "whitespace.txt", "invalid-utf8.bin", "gemma-special.txt"} {
		if _, ok := counts[f][Gemma3]; !ok {
			t.Errorf("%s: no gemma3 reference count", f)
		}
	}
	if random != 100 {
		t.Errorf("%d random Unicode strings with gemma3 counts, want 100", random)
	}
	t.Logf("%d fixtures with gemma3 reference counts", all)
}

// TestGemmaCountListingMatchesReference counts Go's 3 MiB and 4 MiB
// listings, and the 1 MiB one compacted to a single line, sequentially and
// in parallel; the reference counts were recorded with
// ../shared/bench/tokref gemma3 on these texts.
func TestGemmaCountListingMatchesReference(t *testing.T) {
	g := loadedGemma(t)
	for _, tt := range []struct {
		size, want int
	}{{3 << 20, 833610}, {4 << 20, 1112132}} {
		text := bigText(tt.size)
		if seq := g.countSeq(text, nil, 0); seq != tt.want {
			t.Errorf("%d bytes: sequential %d, reference %d", len(text), seq, tt.want)
		}
		if par := g.count(text, 0, runtime.GOMAXPROCS(0)); par != tt.want {
			t.Errorf("%d bytes: parallel %d, reference %d", len(text), par, tt.want)
		}
	}
	// The 1 MiB listing compacted: one 419 KB line, a single section.
	var line bytes.Buffer
	if err := json.Compact(&line, bigText(1<<20)); err != nil {
		t.Fatal(err)
	}
	const want = 172184
	if seq := g.countSeq(line.Bytes(), nil, 0); seq != want {
		t.Errorf("one line: sequential %d, reference %d", seq, want)
	}
	if par := g.count(line.Bytes(), 0, runtime.GOMAXPROCS(0)); par != want {
		t.Errorf("one line: parallel %d, reference %d", par, want)
	}
}

// TestGemmaAtLeastOneLine checks the divert decision on a multi-megabyte
// single line, on all cores and on one, against the full count.
func TestGemmaAtLeastOneLine(t *testing.T) {
	g := loadedGemma(t)
	line := bytes.ReplaceAll(bigText(2<<20), []byte("\n"), nil)
	n := g.countSeq(line, nil, 0)
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		old := runtime.GOMAXPROCS(procs)
		if got := g.count(line, 0, runtime.GOMAXPROCS(0)); got != n {
			t.Errorf("GOMAXPROCS=%d: count %d, sequential %d", procs, got, n)
		}
		if got := g.count(line, 1000, runtime.GOMAXPROCS(0)); got < 1000 || got > n/4 {
			t.Errorf("GOMAXPROCS=%d: count with limit 1000 = %d of %d: did not stop early", procs, got, n)
		}
		if got := g.count(line, int64(n)+1, runtime.GOMAXPROCS(0)); got != n {
			t.Errorf("GOMAXPROCS=%d: count with limit above the count = %d, want %d", procs, got, n)
		}
		runtime.GOMAXPROCS(old)
	}
}

// TestGemmaJoinSet recomputes the joinable pairs from the vocabulary and
// the merges, as the cut argument defines them, and compares them with the
// set the generator shipped.
func TestGemmaJoinSet(t *testing.T) {
	g := loadedGemma(t)
	want := newJoinSet()
	n := 0
	for _, e := range g.vocab.slots {
		if e == 0 {
			continue
		}
		id := e >> slotRankShif & (1<<slotRankBits - 1)
		if g.splitAt[id] == g.splitAt[id+1] {
			continue // no merge makes it
		}
		off, l := int(e&slotOffMask), int(e>>slotLenShift&(1<<slotLenBits-1))
		tok := g.vocab.arena[off : off+l]
		prev := rune(-1)
		for i := 0; i < len(tok); {
			r, w := utf8.DecodeRune(tok[i:])
			r = joinCode(r)
			if prev >= 0 {
				if !g.join.has(prev, r) {
					t.Fatalf("pair %q %q of %q missing from the shipped set", prev, r, tok)
				}
				if !want.has(prev, r) {
					want.add(prev, r)
					n++
				}
			}
			prev = r
			i += w
		}
	}
	shipped := 0
	for _, k := range g.join.slots {
		if k != 0 {
			shipped++
		}
	}
	for a := range 128 {
		for b := range 128 {
			if g.join.has(rune(a), rune(b)) {
				shipped++
			}
		}
	}
	if shipped != n {
		t.Errorf("shipped %d pairs, the merges make %d", shipped, n)
	}
}

// TestGemmaAddedTokenShapes checks what the trie and the parallel cut rule
// assume of the added tokens (gemma_added.go, gemma_boundary.go).
func TestGemmaAddedTokenShapes(t *testing.T) {
	g := loadedGemma(t)
	n := 0
	for k := range g.added.edges {
		if k>>8 == 0 { // an edge from the root: a first byte
			c := byte(k)
			if c >= 0x80 && c != 0xE2 {
				t.Errorf("an added token starts with byte %#x, neither ASCII nor U+2581's lead", c)
			}
		}
		n++
	}
	// Every added token holding '\n' is a run of '\n': walk all tokens.
	var walk func(node uint32, prefix []byte)
	walk = func(node uint32, prefix []byte) {
		if g.added.end[node] && bytes.IndexByte(prefix, '\n') >= 0 && strings.Trim(string(prefix), "\n") != "" {
			t.Errorf("added token %q holds a newline among other bytes", prefix)
		}
		for c := 0; c < 256; c++ {
			if child, ok := g.added.edges[node<<8|uint32(c)]; ok {
				walk(child, append(prefix, byte(c)))
			}
		}
	}
	walk(0, nil)
	if n < 6415 {
		t.Errorf("trie has %d edges for 6,415 added tokens", n)
	}
}

// TestGemmaSplitsOrder checks that each token's merges are distinct by left
// length, which mergeRank relies on to find a merge.
func TestGemmaSplitsOrder(t *testing.T) {
	g := loadedGemma(t)
	for id := 0; id+1 < len(g.splitAt); id++ {
		seen := map[uint32]bool{}
		for _, s := range g.splits[g.splitAt[id]:g.splitAt[id+1]] {
			if seen[s&0xff] {
				t.Fatalf("token %d has two merges with left length %d", id, s&0xff)
			}
			seen[s&0xff] = true
		}
	}
}

// TestGemmaNotLoadedForOthers checks, in a fresh process, that counting
// and preloading with the other encodings never loads Gemma 3.
func TestGemmaNotLoadedForOthers(t *testing.T) {
	if os.Getenv("TOKENS_GEMMA_CHILD") == "1" {
		// Wait for the background loads themselves to end, not for a
		// while: a load that reached Gemma late must still be seen.
		var loads sync.WaitGroup
		goPreload = func(load func()) {
			loads.Add(1)
			go func() { defer loads.Done(); load() }()
		}
		for _, name := range []string{O200kBase, CL100kBase, Claude} {
			c, _ := ForEncoding(name)
			c.Preload()
			c.CountString("hello world")
		}
		ForModel("openai", "gpt-4o").CountString("x")
		loads.Wait()
		if gemma3.started.Load() {
			t.Fatal("Gemma 3 was loaded")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGemmaNotLoadedForOthers$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TOKENS_GEMMA_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if ForModel("openai", "gpt-4o").gem != nil || ForModel("anthropic", "claude-sonnet-4").gem != nil {
		t.Fatal("a non-Gemini model got the Gemma counter")
	}
}

// gemmaFixtures returns the fixture files with their recorded gemma3 counts.
func gemmaFixtures(t testing.TB) map[string]int {
	counts := loadCounts(t)
	out := map[string]int{}
	for file, encs := range counts {
		want, ok := encs[Gemma3]
		if !ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(fixtureDir, file))
		if err != nil {
			t.Fatal(err)
		}
		out[string(data)] = want
	}
	return out
}

// FuzzGemma starts from the fixture corpus. For an input that is a fixture
// it checks the recorded reference count; for every input it checks what
// the algorithm guarantees: the parallel count equals the sequential one,
// the count is the sum of the counts of the parts at every safe cut
// (gemmaCut, which also proves the chunking), the heap merge equals the
// quadratic loop on every section, and the count is within the byte bounds
// AtLeast relies on.
func FuzzGemma(f *testing.F) {
	fixtures := gemmaFixtures(f)
	for s := range fixtures {
		if len(s) <= 4096 {
			f.Add(s)
		}
	}
	seedCorpus(f)
	f.Add("<start_of_turn>user\n  x\n\n\n<eos>▁▁ a")
	g := loadedGemma(f)
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		whole := g.countSeq(b, nil, 0)
		if want, ok := fixtures[s]; ok && whole != want {
			t.Fatalf("fixture of %d bytes: %d, reference %d", len(s), whole, want)
		}
		if bound := 3 * len(b); whole > bound || (len(b) > 0 && whole == 0) {
			t.Fatalf("%q: count %d outside (0, %d]", s, whole, bound)
		}
		if utf8.Valid(b) && whole > len(b) {
			t.Fatalf("%q: count %d above the byte length", s, whole)
		}
		if par := g.count(b, 0, runtime.GOMAXPROCS(0)); par != whole {
			t.Fatalf("%q: parallel %d, sequential %d", s, par, whole)
		}
		if len(b) > 2000 {
			b = b[:2000] // keep each cut's recount cheap
			whole = g.countSeq(b, nil, 0)
		}
		for p := 1; p < len(b); p++ {
			if !g.gemmaCut(b, p) {
				continue
			}
			if l, r := g.countSeq(b[:p], nil, 0), g.countSeq(b[p:], nil, 0); l+r != whole {
				t.Fatalf("cut at %d of %q: %d + %d, whole %d", p, b, l, r, whole)
			}
		}
		sc := &scratch{}
		for _, sec := range bytes.FieldsFunc(b, func(r rune) bool { return r == '\n' || r == '\t' }) {
			if !utf8.Valid(sec) {
				continue
			}
			norm := bytes.ReplaceAll(sec, []byte(" "), []byte("▁"))
			if small, large := g.mergeGemmaSmall(norm, sc), g.mergeGemmaLarge(norm, sc); small != large {
				t.Fatalf("%q: loop %d, heap %d", norm, small, large)
			}
		}
	})
}

// FuzzGemmaDecompose checks count(a+b) = count(a) + count(b) whenever the
// join is a safe cut, and that a and b are counted the same alone and
// inside a text made of newline-separated lines (a newline after a
// non-newline is always a cut).
func FuzzGemmaDecompose(f *testing.F) {
	f.Add("hello", " world")
	f.Add("{\"a\":", " 1}")
	f.Add("x\n", "<start_of_turn>")
	f.Add("中文", "，")
	f.Add("a\xff", "\x80b")
	g := loadedGemma(f)
	f.Fuzz(func(t *testing.T, a, b string) {
		ab := []byte(a + b)
		ca, cb := g.countSeq([]byte(a), nil, 0), g.countSeq([]byte(b), nil, 0)
		if len(a) > 0 && len(b) > 0 && g.gemmaCut(ab, len(a)) {
			if got := g.countSeq(ab, nil, 0); got != ca+cb {
				t.Fatalf("%q + %q: %d, parts %d + %d", a, b, got, ca, cb)
			}
		}
		if strings.HasSuffix(a, "\n") || strings.HasPrefix(b, "\n") {
			return
		}
		lines := []byte(a + "\n" + b)
		if got := g.countSeq(lines, nil, 0); got != ca+1+cb {
			t.Fatalf("%q \\n %q: %d, want %d + 1 + %d", a, b, got, ca, cb)
		}
	})
}

// FuzzGemmaMergeLargeMatchesSmall repeats inputs into long pieces and
// checks the heap merge against the loop.
func FuzzGemmaMergeLargeMatchesSmall(f *testing.F) {
	seedCorpus(f)
	f.Add(strings.Repeat("ab", 40))
	f.Add(strings.Repeat("▁", 50))
	f.Add("ababababa▁▁▁aaa")
	g := loadedGemma(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 1 || !utf8.ValidString(s) {
			return
		}
		s = strings.Repeat(s, 1+200/len(s))
		sc := &scratch{}
		if small, large := g.mergeGemmaSmall([]byte(s), sc), g.mergeGemmaLarge([]byte(s), sc); small != large {
			t.Fatalf("%q: loop %d, heap %d", s, small, large)
		}
	})
}
