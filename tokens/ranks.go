package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

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
// binary (the .tiktoken files of github.com/pkoukk/tiktoken-go-loader), so
// loading never touches the network or the file system.
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
	o200kBase  = &lazyEncoding{name: "o200k_base", asset: "o200k_base.tiktoken", split: splitO200k, size: 199998}
	cl100kBase = &lazyEncoding{name: "cl100k_base", asset: "cl100k_base.tiktoken", split: splitCL100k, size: 100256}
)

func (l *lazyEncoding) get() (*encoding, error) {
	l.once.Do(func() {
		initClasses()
		l.enc, l.err = loadEncoding(l.name, l.asset, l.split, l.size)
	})
	return l.enc, l.err
}

// loadEncoding parses a .tiktoken file ("<base64 token> <rank>" per line).
// All token bytes go into the table's arena as they are decoded.
func loadEncoding(name, asset string, split splitter, size int) (*encoding, error) {
	data, err := assets.Assets.ReadFile(asset)
	if err != nil {
		return nil, fmt.Errorf("tokens: read embedded %s: %w", asset, err)
	}
	ranks := newRankTable(size, len(data)*3/4) // decoded base64 is 3/4 of the text at most
	for line := 1; len(data) > 0; line++ {
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if len(l) == 0 {
			continue
		}
		sp := bytes.IndexByte(l, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("tokens: %s line %d: %w", asset, line, errBadVocab)
		}
		rank, err := strconv.ParseUint(string(l[sp+1:]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("tokens: %s line %d: %w", asset, line, err)
		}
		off := len(ranks.arena)
		ranks.arena = ranks.arena[:off+base64.StdEncoding.DecodedLen(sp)]
		n, err := base64.StdEncoding.Decode(ranks.arena[off:], l[:sp])
		if err != nil {
			return nil, fmt.Errorf("tokens: %s line %d: %w", asset, line, err)
		}
		ranks.arena = ranks.arena[:off+n]
		if err := ranks.insert(n, uint32(rank)); err != nil {
			return nil, fmt.Errorf("tokens: %s line %d: %w", asset, line, err)
		}
	}
	e := &encoding{name: name, split: split, ranks: ranks}
	e.scratch.New = func() any { return new(scratch) }
	return e, nil
}
