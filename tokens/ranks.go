package tokens

import (
	"embed"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
)

// vocab holds the two vocabularies in the compact form of
// internal/tiktokengen: OpenAI's .tiktoken files (through the module
// github.com/pkoukk/tiktoken-go-loader), without the base64 and the two
// encodings nothing counts with, 4.5 MB less binary.
//
//go:generate go run ./internal/tiktokengen -o .
//go:embed o200k_base.bin cl100k_base.bin
var vocab embed.FS

// vocabMagic starts each file (tiktokengen.Magic).
const vocabMagic = "tiktoken-ranks\x00\x01"

// rankMax marks "no such token": a pair that never merges.
const rankMax = ^uint32(0)

// encoding is a loaded BPE vocabulary with its pre-tokenizer.
type encoding struct {
	name  string
	split splitter
	ranks *rankTable
	// scratch pools per-goroutine merge buffers and piece caches; per
	// encoding, because a cached count belongs to one vocabulary.
	scratch sync.Pool
}

func (e *encoding) rank(b []byte) uint32 {
	r, _ := e.ranks.get(b)
	return r
}

// lazyEncoding loads an encoding on first use. The ranks ship inside the
// binary ([vocab]), so loading never touches the network or the file
// system.
type lazyEncoding struct {
	name  string
	asset string
	split splitter
	size  int // number of ranks, to size the map once

	once sync.Once
	enc  *encoding
	err  error
}

var (
	o200kBase  = &lazyEncoding{name: "o200k_base", asset: "o200k_base.bin", split: splitO200k, size: 199998}
	cl100kBase = &lazyEncoding{name: "cl100k_base", asset: "cl100k_base.bin", split: splitCL100k, size: 100256}
)

func (l *lazyEncoding) get() (*encoding, error) {
	l.once.Do(func() {
		initClasses()
		l.enc, l.err = loadEncoding(l.name, l.asset, l.split, l.size)
	})
	return l.enc, l.err
}

// loadEncoding reads a vocabulary of [vocab]: the magic, the number of
// tokens, then each token's length and bytes in rank order. All token
// bytes go into the table's arena as they are read.
func loadEncoding(name, asset string, split splitter, size int) (*encoding, error) {
	data, err := vocab.ReadFile(asset)
	if err != nil {
		return nil, fmt.Errorf("tokens: read embedded %s: %w", asset, err)
	}
	return parseVocab(name, asset, data, split, size)
}

// parseVocab is [loadEncoding] of the file's bytes.
func parseVocab(name, asset string, data []byte, split splitter, size int) (*encoding, error) {
	if !strings.HasPrefix(string(data), vocabMagic) {
		return nil, fmt.Errorf("tokens: %s: %w", asset, errBadVocab)
	}
	data = data[len(vocabMagic):]
	n, w := binary.Uvarint(data)
	if w <= 0 || n != uint64(size) {
		return nil, fmt.Errorf("tokens: %s: %d tokens, want %d: %w", asset, n, size, errBadVocab)
	}
	data = data[w:]
	ranks := newRankTable(size, len(data))
	for rank := range uint32(n) {
		if len(data) == 0 || int(data[0]) >= len(data) || data[0] == 0 {
			return nil, fmt.Errorf("tokens: %s rank %d: %w", asset, rank, errBadVocab)
		}
		l := int(data[0])
		ranks.arena = append(ranks.arena, data[1:1+l]...)
		data = data[1+l:]
		if err := ranks.insert(l, rank); err != nil {
			return nil, fmt.Errorf("tokens: %s rank %d: %w", asset, rank, err)
		}
	}
	if len(data) != 0 {
		return nil, fmt.Errorf("tokens: %s: %d bytes after the last token: %w", asset, len(data), errBadVocab)
	}
	e := &encoding{name: name, split: split, ranks: ranks}
	e.scratch.New = func() any { return new(scratch) }
	return e, nil
}
