package tokens

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func seedCorpus(f *testing.F) {
	for _, s := range []string{
		"", "hello world", "a  1", "x\n \n 2", "it's 12345 don'T", "\"a\": 1, \"b\": [2, 3]",
		"中文 123\t456", "e\u0301 99", "  \n\n  x 7", "\xff\xfe 1 \xc3 2", "abc\x00 9 def",
		"a\t1\tb\t22", "///\n/ 1", "  1  2", "ÀB 'S 3",
	} {
		f.Add(s)
	}
}

// FuzzSplitBoundary proves the parallel cut rule: cutting at any safe
// boundary and counting the parts gives the whole-text count, and the
// pieces of the parts are the pieces of the whole.
func FuzzSplitBoundary(f *testing.F) {
	seedCorpus(f)
	for _, name := range []string{O200kBase, CL100kBase} {
		if _, err := mustLazy(name).get(); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		for _, name := range []string{O200kBase, CL100kBase} {
			e, _ := mustLazy(name).get()
			whole := e.countSeq(b, nil, 0)
			pieces := strings.Join(ourPieces(e.split, s), "\x00")
			for p := 1; p < len(b); p++ {
				if !safeCut(b, p) {
					continue
				}
				if got := e.countSeq(b[:p], nil, 0) + e.countSeq(b[p:], nil, 0); got != whole {
					t.Fatalf("%s: cut at %d of %q: %d + ... = %d, whole %d", name, p, s, got-e.countSeq(b[p:], nil, 0), got, whole)
				}
				parts := strings.Join(ourPieces(e.split, s[:p]), "\x00") + "\x00" + strings.Join(ourPieces(e.split, s[p:]), "\x00")
				if parts != pieces {
					t.Fatalf("%s: cut at %d of %q changes the pieces", name, p, s)
				}
			}
		}
	})
}

// FuzzSplitMatchesRegexp compares the hand-written pre-tokenizers with the
// reference patterns on arbitrary valid UTF-8.
func FuzzSplitMatchesRegexp(f *testing.F) {
	seedCorpus(f)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) || strings.ContainsRune(s, 'ſ') {
			return // regexp2 reads runes differently on bad input; see refPatterns for ſ
		}
		for name, pattern := range refPatterns {
			want := strings.Join(refPieces(t, pattern, s), "\x00")
			if got := strings.Join(ourPieces(splitters[name], s), "\x00"); got != want {
				t.Fatalf("%s: %q\n got %q\nwant %q", name, s, got, want)
			}
		}
	})
}

// FuzzMergeLargeMatchesSmall checks that the heap merge used for long
// pieces makes exactly the merges of tiktoken's loop.
func FuzzMergeLargeMatchesSmall(f *testing.F) {
	seedCorpus(f)
	f.Add(strings.Repeat("ab", 40))
	f.Add(strings.Repeat("=", 100))
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 2 {
			return
		}
		s = strings.Repeat(s, 1+200/len(s))
		for _, name := range []string{O200kBase, CL100kBase} {
			e, _ := mustLazy(name).get()
			sc := &scratch{}
			small, large := e.mergeSmall([]byte(s), sc), e.mergeLarge([]byte(s), sc)
			if small != large {
				t.Fatalf("%s %q: loop %d, heap %d", name, s, small, large)
			}
		}
	})
}

func mustLazy(name string) *lazyEncoding {
	c, err := ForEncoding(name)
	if err != nil {
		panic(err)
	}
	return c.enc
}
