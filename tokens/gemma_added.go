package tokens

// Gemma 3's tokenizer.json lists 6,415 added tokens: the special tokens
// (<bos>, <start_of_turn>, …), <unused0>…<unused6241>, a few HTML tags, and
// runs of 1-31 newlines, 1-31 tabs and 2-31 U+2581. The reference (like the
// Hugging Face tokenizers) finds them in the raw text before normalizing or
// merging anything: scanning left to right, at each position it takes the
// longest added token that starts there, if any, and counts it as one token;
// the text between two of them is a section that BPE counts on its own.
// Special tokens are recognised this way but never added (no <bos>).
//
// So "\n" and "\t" always end a section, which keeps sections short on
// real text, and "<start_of_turn>" in a tool result is one token.

// addedTrie is a byte trie of the added tokens. The reference walks a trie
// of UTF-16 code units; every added token starts with an ASCII byte or the
// lead byte of U+2581, so it can only match at a character boundary, and the
// longest match in bytes is the longest in code units.
type addedTrie struct {
	first [256]bool         // bytes an added token starts with
	edges map[uint32]uint32 // node<<8 | byte → child node
	end   []bool            // a token ends at the node
	// adj marks the ASCII pairs adjacent in some added token (for the
	// parallel cut rule, gemma_boundary.go).
	adj [128][2]uint64
}

func newAddedTrie(tokens [][]byte) addedTrie {
	t := addedTrie{edges: make(map[uint32]uint32, 8*len(tokens)), end: []bool{false}}
	for _, tok := range tokens {
		if len(tok) == 0 {
			continue
		}
		t.first[tok[0]] = true
		node := uint32(0)
		for _, c := range tok {
			k := node<<8 | uint32(c)
			child, ok := t.edges[k]
			if !ok {
				child = uint32(len(t.end))
				t.end = append(t.end, false)
				t.edges[k] = child
			}
			node = child
		}
		t.end[node] = true
		for i := 1; i < len(tok); i++ {
			if a, b := tok[i-1], tok[i]; a < 128 && b < 128 {
				t.adj[a][b>>6] |= 1 << (b & 63)
			}
		}
	}
	return t
}

// adjacent reports whether the ASCII bytes a b occur next to each other in
// an added token.
func (t *addedTrie) adjacent(a, b byte) bool {
	return t.adj[a][b>>6]&(1<<(b&63)) != 0
}

// match returns the length of the longest added token at b[i:], or 0.
func (t *addedTrie) match(b []byte, i int) int {
	if !t.first[b[i]] {
		return 0
	}
	node, best := uint32(0), 0
	for j := i; j < len(b); j++ {
		child, ok := t.edges[node<<8|uint32(b[j])]
		if !ok {
			break
		}
		node = child
		if t.end[node] {
			best = j + 1 - i
		}
	}
	return best
}
