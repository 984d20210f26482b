package tokens

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// TestVocabIsTiktokens: the compact vocabularies the binary embeds hold
// exactly the tokens and ranks of OpenAI's .tiktoken files (through
// github.com/pkoukk/tiktoken-go-loader, now a test dependency only):
// every line's token has its rank, and nothing else is there.
func TestVocabIsTiktokens(t *testing.T) {
	for _, l := range []*lazyEncoding{o200kBase, cl100kBase} {
		t.Run(l.name, func(t *testing.T) {
			e, err := l.get()
			if err != nil {
				t.Fatal(err)
			}
			text, err := assets.Assets.ReadFile(l.name + ".tiktoken")
			if err != nil {
				t.Fatal(err)
			}
			lines := 0
			for _, line := range bytes.Split(text, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				b64, r, _ := bytes.Cut(line, []byte(" "))
				tok, err := base64.StdEncoding.DecodeString(string(b64))
				if err != nil {
					t.Fatal(err)
				}
				want, err := strconv.ParseUint(string(r), 10, 32)
				if err != nil {
					t.Fatal(err)
				}
				if got, ok := e.ranks.get(tok); !ok || uint64(got) != want {
					t.Fatalf("token %q: rank %d (%v), the .tiktoken file says %d", tok, got, ok, want)
				}
				lines++
			}
			if lines != l.size || len(e.ranks.arena) != arenaBytes(t, l.asset) {
				t.Fatalf("%d lines, %d tokens embedded", lines, l.size)
			}
		})
	}
}

// arenaBytes is the token bytes of an embedded file: its size less the
// header and one length byte per token.
func arenaBytes(t *testing.T, asset string) int {
	b, err := vocab.ReadFile(asset)
	if err != nil {
		t.Fatal(err)
	}
	_, w := binary.Uvarint(b[len(vocabMagic):])
	l := o200kBase
	if asset == cl100kBase.asset {
		l = cl100kBase
	}
	return len(b) - len(vocabMagic) - w - l.size
}

// TestVocabMalformed: a damaged vocabulary is errBadVocab, never a panic.
func TestVocabMalformed(t *testing.T) {
	good, err := vocab.ReadFile(cl100kBase.asset)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"no magic":       good[1:],
		"cut short":      good[:len(good)-3],
		"trailing bytes": append(bytes.Clone(good), 1, 'x'),
		"zero length":    append(bytes.Clone(good[:len(vocabMagic)+3]), 0),
	} {
		if _, err := parseVocab("test", "test.bin", b, splitCL100k, cl100kBase.size); !errors.Is(err, errBadVocab) {
			t.Errorf("%s: %v, want errBadVocab", name, err)
		}
	}
}
