package tokens

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// diffInputs are 1,500 seeded random texts for the differential test
// against the JS reference: slices of the fixtures glued together, strings
// over an alphabet of the pieces that stress the tokenizer (added tokens,
// "▁", spaces, newlines, ill-formed bytes, combining marks), and random
// bytes; and seven long ones (50,000 spaces, 200 KB of base64, …) that are
// one piece or one line. Only their reference counts are committed
// (testdata/tokens/gemma3-differential.counts); to record them again:
//
//	TOKENS_WRITE_DIFF=/tmp/diff go test -run TestGemmaDifferential ./tokens/
//	../shared/bench/tokref gemma3 /tmp/diff/*.txt | awk '{ sub("tokens=", "", $2); n = split($1, p, "/"); print p[n], $2 }' \
//	  >testdata/tokens/gemma3-differential.counts
func diffInputs(t testing.TB) map[string][]byte {
	var fixtures [][]byte
	for _, name := range []string{"app.log", "cjk.txt", "code.go.txt", "emoji.txt", "k8s-pretty.json", "k8s-min.json",
		"markdown.md", "unicode.txt", "whitespace.txt", "invalid-utf8.bin", "arabic.txt", "gemma-special.txt", "prose.txt"} {
		b, err := os.ReadFile(filepath.Join(fixtureDir, name))
		if err != nil {
			t.Fatal(err)
		}
		fixtures = append(fixtures, b)
	}
	alphabet := []string{" ", "  ", "\n", "\t", "<", ">", "/", "a", "b", "ab", "▁", "<start_of_turn>", "<b>",
		"\n\n\n", "{", "\"", ":", "1", "22", "\xff", "\xe2\x82", "é", "e\u0301", "ー", "日本", "😀", "\r", "\x00",
		".", "_", "-", "=", "<unused12>", "</td>", "'s", "The", " the", "\u3000"}
	rnd := rand.New(rand.NewPCG(20261130, 15))
	out := map[string][]byte{}
	for i := range 1500 {
		var b []byte
		switch k := rnd.Float64(); {
		case k < 0.4:
			for range 1 + rnd.IntN(6) {
				f := fixtures[rnd.IntN(len(fixtures))]
				from := rnd.IntN(len(f))
				b = append(b, f[from:min(len(f), from+1+rnd.IntN(400))]...)
			}
		case k < 0.8:
			for range 1 + rnd.IntN(120) {
				b = append(b, alphabet[rnd.IntN(len(alphabet))]...)
			}
		default:
			for range 1 + rnd.IntN(200) {
				b = append(b, byte(rnd.IntN(256)))
			}
		}
		out[fmt.Sprintf("d%04d.txt", i)] = b
	}
	// Long single pieces and lines, merged through the heap.
	random := make([]byte, 150000)
	for i := range random {
		random[i] = byte(rnd.IntN(256))
	}
	var indent, digits strings.Builder
	for i := range 3000 {
		indent.WriteString(strings.Repeat("\t", rnd.IntN(6)) + strings.Repeat(" ", rnd.IntN(10)) + fmt.Sprintf("x = %d\n", i))
	}
	for range 20000 {
		fmt.Fprintf(&digits, "%d%08x", rnd.IntN(1e9), rnd.Uint32())
	}
	for name, b := range map[string]string{
		"s-spaces.txt":  strings.Repeat(" ", 50000),
		"s-ab.txt":      strings.Repeat("ab", 30000),
		"s-base64.txt":  base64.StdEncoding.EncodeToString(random),
		"s-lowline.txt": strings.Repeat("▁", 20001) + "x" + strings.Repeat("▁ ", 3000),
		"s-indent.txt":  indent.String(),
		"s-digits.txt":  digits.String(),
		"s-cjk.txt":     strings.Repeat("日本語の文章と中文句子，한국어 문장。", 2000),
	} {
		out[name] = []byte(b)
	}
	return out
}

// TestGemmaDifferential compares the count of each of diffInputs with the
// reference's recorded count.
func TestGemmaDifferential(t *testing.T) {
	inputs := diffInputs(t)
	if dir := os.Getenv("TOKENS_WRITE_DIFF"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range inputs {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Skipf("wrote %d inputs to %s", len(inputs), dir)
	}
	f, err := os.Open(filepath.Join(fixtureDir, "gemma3-differential.counts"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, _ := ForEncoding(Gemma3)
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		name, count, ok := strings.Cut(sc.Text(), " ")
		want, err := strconv.Atoi(count)
		b, found := inputs[name]
		if !ok || err != nil || !found {
			t.Fatalf("bad line %q", sc.Text())
		}
		if got := c.Count(b); got != want {
			t.Errorf("%s %q: %d, reference %d", name, b, got, want)
		}
		n++
	}
	if n != len(inputs) {
		t.Errorf("%d reference counts for %d inputs", n, len(inputs))
	}
}
