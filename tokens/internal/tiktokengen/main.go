// Command tiktokengen writes the compact tiktoken vocabularies the tokens
// package embeds (o200k_base.bin, cl100k_base.bin) from the .tiktoken
// files of the Go module github.com/pkoukk/tiktoken-go-loader, which are
// OpenAI's. The module's embedded files are base64 text and come four at
// a time (p50k_base and r50k_base too, which nothing counts with): 6.8 MB
// of the binary, where these two are 2.3 MB (docs/performance.md, "Binary
// size").
//
// In tokens/: go generate (or go run ./internal/tiktokengen -o .).
//
// Output format: the magic "tiktoken-ranks\x00\x01", then n, the number
// of tokens, as an unsigned varint, then per rank 0..n-1 the token's byte
// length (one byte, 1..255) and its bytes. The generator refuses a file
// whose ranks are not exactly 0..n-1 in order, or a token outside 1..255
// bytes, so the rank is the position.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// Magic starts each file; the tokens package checks it.
const Magic = "tiktoken-ranks\x00\x01"

func main() {
	out := flag.String("o", ".", "folder to write o200k_base.bin and cl100k_base.bin to")
	flag.Parse()
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		text, err := assets.Assets.ReadFile(name + ".tiktoken")
		if err != nil {
			fail(err)
		}
		b, err := Encode(text)
		if err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		if err := os.WriteFile(filepath.Join(*out, name+".bin"), b, 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("%s.bin: %d bytes (from %d)\n", name, len(b), len(text))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tiktokengen:", err)
	os.Exit(1)
}

// Encode turns a .tiktoken file ("<base64 token> <rank>" per line) into
// the compact form.
func Encode(text []byte) ([]byte, error) {
	var toks [][]byte
	for line := 1; len(text) > 0; line++ {
		l := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			l, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if len(l) == 0 {
			continue
		}
		b64, r, ok := bytes.Cut(l, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("line %d: no rank", line)
		}
		rank, err := strconv.Atoi(string(r))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if rank != len(toks) {
			return nil, fmt.Errorf("line %d: rank %d, want %d: ranks must run 0..n-1 in order", line, rank, len(toks))
		}
		tok, err := base64.StdEncoding.DecodeString(string(b64))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if len(tok) == 0 || len(tok) > 255 {
			return nil, fmt.Errorf("line %d: a token of %d bytes", line, len(tok))
		}
		toks = append(toks, tok)
	}
	if len(toks) == 0 {
		return nil, errors.New("no tokens")
	}
	out := binary.AppendUvarint([]byte(Magic), uint64(len(toks)))
	for _, t := range toks {
		out = append(out, byte(len(t)))
		out = append(out, t...)
	}
	return out, nil
}
