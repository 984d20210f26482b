package tokens

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// rankMax marks "no such token": a pair that never merges.
const rankMax = ^uint32(0)

// encoding is a loaded BPE vocabulary with its pre-tokenizer.
type encoding struct {
	name  string
	split splitter
	ranks map[string]uint32
}

func (e *encoding) rank(b []byte) uint32 {
	if r, ok := e.ranks[string(b)]; ok {
		return r
	}
	return rankMax
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
// All token bytes go into one arena and the map keys point into it, which
// keeps the load to one large allocation plus the map.
func loadEncoding(name, asset string, split splitter, size int) (*encoding, error) {
	data, err := assets.Assets.ReadFile(asset)
	if err != nil {
		return nil, fmt.Errorf("tokens: read embedded %s: %w", asset, err)
	}
	arena := make([]byte, 0, len(data)) // decoded base64 is always shorter
	ranks := make(map[string]uint32, size)
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
		off := len(arena)
		arena = arena[:off+base64.StdEncoding.DecodedLen(sp)]
		n, err := base64.StdEncoding.Decode(arena[off:], l[:sp])
		if err != nil {
			return nil, fmt.Errorf("tokens: %s line %d: %w", asset, line, err)
		}
		arena = arena[:off+n]
		// The arena never grows past its capacity, so it is never moved and
		// the keys stay valid; it is never written again.
		ranks[unsafe.String(&arena[off], n)] = uint32(rank)
	}
	return &encoding{name: name, split: split, ranks: ranks}, nil
}
