package tokens

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestCountReaderMatchesCount: counting a stream equals counting it whole,
// for every encoding, on text with cuts everywhere, text with none for
// megabytes (held whole), text cut only by newlines (Gemma's rule), and
// ill-formed UTF-8, read in odd-sized pieces.
func TestCountReaderMatchesCount(t *testing.T) {
	defer func(n int) { readChunk = n }(readChunk)
	readChunk = 64 << 10                              // so that small texts take many chunks
	words := strings.Repeat("héllo wörld 12 ", 1<<14) // ~256 KiB, cuts every few bytes
	noCut := strings.Repeat("abcdefghij", 20<<10)     // 200 KiB: no space, digit or newline
	lines := strings.Repeat(strings.Repeat("x", 100<<10)+"\n", 3)
	broken := strings.Repeat("a \xff\xfe b\xc3", 1<<15)
	texts := map[string][]byte{
		"listing": bigText(1 << 20), "words": []byte(words), "nocut": []byte(noCut),
		"lines": []byte(lines), "broken": []byte(broken), "empty": nil, "short": []byte("hello world"),
	}
	for _, name := range Encodings() {
		c, _ := ForEncoding(name)
		for tn, text := range texts {
			want := c.Count(text)
			// A reader that returns odd sizes, so that chunks end anywhere.
			r := iotest.HalfReader(bytes.NewReader(text))
			got, err := c.CountReader(r)
			if err != nil || got != want {
				t.Errorf("%s %s: CountReader = %d, %v; Count = %d", name, tn, got, err, want)
			}
		}
	}
}

func TestCountReaderError(t *testing.T) {
	defer func(n int) { readChunk = n }(readChunk)
	readChunk = 64 << 10
	c, _ := ForEncoding(O200kBase)
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(bigText(1<<20)), iotest.ErrReader(boom))
	if _, err := c.CountReader(r); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}
