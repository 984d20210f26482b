package tokens

// A splitter is a hand-written equivalent of one of tiktoken's pre-tokenizer
// regular expressions. next(b, i) returns the end of the piece that starts at
// b[i] (i < len(b)); pieces tile the input. Each alternative of the pattern is
// tried in order with the same backtracking result a PCRE-style engine (Rust's
// fancy-regex, which tiktoken uses) would produce, so the pieces are identical;
// the differential test against regexp2 checks this on random text.
type splitter func(b []byte, i int) int

// splitO200k implements
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitO200k(b []byte, i int) int {
	w0, c0 := 1, asciiClass[b[i]]
	if b[i] >= 0x80 {
		w0, c0 = decodeMulti(b, i)
	}
	if c0&clNotPrefix == 0 && i+w0 < len(b) {
		if e := o200kLower(b, i+w0); e >= 0 {
			return e
		}
	}
	if c0&(clA|clB) != 0 {
		if e := o200kLower(b, i); e >= 0 {
			return e
		}
	}
	if c0&clNotPrefix == 0 && i+w0 < len(b) {
		if e := o200kUpper(b, i+w0); e >= 0 {
			return e
		}
	}
	if c0&clA != 0 {
		if e := o200kUpper(b, i); e >= 0 {
			return e
		}
	}
	return splitCommon(b, i, w0, c0, true)
}

// o200kLower matches [A]*[B]+C? at j, where A and B are the two letter classes
// of the first alternative and C the optional contraction. It returns the end
// or -1.
func o200kLower(b []byte, j int) int {
	k, lastB := j, -1
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clA == 0 {
			break
		}
		k += w
		if c&clB != 0 {
			lastB = k
		}
	}
	if k < len(b) {
		if w, c := decode(b, k); c&clB != 0 {
			// The greedy A-run is followed by B: B+ takes the whole B-run.
			k += w
			for k < len(b) {
				w, c := 1, asciiClass[b[k]]
				if b[k] >= 0x80 {
					w, c = decodeMulti(b, k)
				}
				if c&clB == 0 {
					break
				}
				k += w
			}
			return contraction(b, k)
		}
	}
	// Backtracking the A-run to its last B-class rune is the first way B+
	// can match; B+ then stops right after it.
	if lastB < 0 {
		return -1
	}
	return contraction(b, lastB)
}

// o200kUpper matches [A]+[B]*C? at j (the second alternative) or returns -1.
func o200kUpper(b []byte, j int) int {
	k := j
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clA == 0 {
			break
		}
		k += w
	}
	if k == j {
		return -1
	}
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clB == 0 {
			break
		}
		k += w
	}
	return contraction(b, k)
}

// contraction extends k over (?i:'s|'t|'re|'ve|'m|'ll|'d) when one follows.
func contraction(b []byte, k int) int {
	if e := matchContraction(b, k); e > 0 {
		return e
	}
	return k
}

// matchContraction returns the end of a contraction at k, or 0. Case-insensitive
// matching folds U+017F (long s) to s, as Unicode simple case folding does.
func matchContraction(b []byte, k int) int {
	if k+1 >= len(b) || b[k] != '\'' {
		return 0
	}
	switch b[k+1] | 0x20 {
	case 's', 't', 'm', 'd':
		if b[k+1] < 0x80 {
			return k + 2
		}
	case 'r', 'v', 'l':
		if k+2 < len(b) {
			want := byte('e')
			if b[k+1]|0x20 == 'l' {
				want = 'l'
			}
			if b[k+2]|0x20 == want {
				return k + 3
			}
		}
	}
	if b[k+1] == 0xC5 && k+2 < len(b) && b[k+2] == 0xBF {
		return k + 3
	}
	return 0
}

// splitCL100k implements
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func splitCL100k(b []byte, i int) int {
	if b[i] == '\'' {
		if e := matchContraction(b, i); e > 0 {
			return e
		}
	}
	w0, c0 := 1, asciiClass[b[i]]
	if b[i] >= 0x80 {
		w0, c0 = decodeMulti(b, i)
	}
	if c0&clNotPrefix == 0 && i+w0 < len(b) {
		if e := letterRun(b, i+w0); e > i+w0 {
			return e
		}
	}
	if c0&clL != 0 {
		return letterRun(b, i)
	}
	return splitCommon(b, i, w0, c0, false)
}

// letterRun returns the end of the letter run from k. The class-run loop
// is written out here and in the o200k alternatives on purpose: a shared
// helper taking the class mask measured 15-20% slower on cl100k_base
// (go test -bench 'BenchmarkCount/ours-1core' ./tokens).
func letterRun(b []byte, k int) int {
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clL == 0 {
			break
		}
		k += w
	}
	return k
}

// splitCommon is the tail both patterns share once no letter alternative
// matched: \p{N}{1,3}, the punctuation run, and the whitespace rules.
// slash selects o200k's punctuation suffix [\r\n/]* over cl100k's [\r\n]*.
func splitCommon(b []byte, i, w0 int, c0 uint8, slash bool) int {
	if c0&clN != 0 {
		k := i + w0
		for n := 1; n < 3 && k < len(b); n++ {
			w, c := 1, asciiClass[b[k]]
			if b[k] >= 0x80 {
				w, c = decodeMulti(b, k)
			}
			if c&clN == 0 {
				break
			}
			k += w
		}
		return k
	}
	if b[i] == ' ' && i+1 < len(b) {
		if _, c := decode(b, i+1); c&clPunct == 0 {
			return punctRun(b, i+1, slash)
		}
	}
	if c0&clPunct == 0 {
		return punctRun(b, i, slash)
	}
	// c0 is whitespace (every rune is a letter, a number, punctuation or
	// whitespace, and a mark counts as punctuation here).
	k, lastNL, lastStart := i, -1, i
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clS == 0 {
			break
		}
		lastStart = k
		k += w
		if c&clNL != 0 {
			lastNL = k
		}
	}
	switch {
	case lastNL >= 0: // \s*[\r\n]+ backtracks to the last newline
		return lastNL
	case k == len(b): // \s+(?!\S) at the end of the text
		return k
	case lastStart > i: // \s+(?!\S) leaves the last space to the next piece
		return lastStart
	default: // \s+ of one rune
		return k
	}
}

func punctRun(b []byte, k int, slash bool) int {
	for k < len(b) {
		w, c := 1, asciiClass[b[k]]
		if b[k] >= 0x80 {
			w, c = decodeMulti(b, k)
		}
		if c&clPunct != 0 {
			break
		}
		k += w
	}
	for k < len(b) && (b[k] == '\r' || b[k] == '\n' || (slash && b[k] == '/')) {
		k++
	}
	return k
}
