package config

import (
	"fmt"
	"unicode/utf8"
)

// maxExpansions bounds how many plain globs a pattern's alternates may expand
// to ({a,b}{c,d} is 4), so a hostile config cannot make matching quadratic.
const maxExpansions = 256

// maxPatternLen bounds a pattern's source; tool names are short.
const maxPatternLen = 512

// Pattern is a compiled tool-name pattern. See [CompilePattern] for the
// syntax. The zero Pattern matches nothing.
type Pattern struct {
	src  string
	alts []glob // one per expansion of {a,b} alternates
	lens []int  // source length of each expansion, for precedence
}

// glob is one alternate-free expansion of a pattern.
type glob []tok

type tokKind uint8

const (
	tokLit   tokKind = iota // one literal byte
	tokAny                  // ? : one rune
	tokStar                 // * : any run of runes
	tokClass                // [..] or [!..] : one rune in (or not in) set
)

type tok struct {
	kind tokKind
	neg  bool      // tokClass: [!...]
	lit  byte      // tokLit
	set  [2]uint64 // tokClass: ASCII membership bitmap
}

// PatternError describes why a pattern did not compile. Offset is the byte
// offset into the pattern where the problem is, so the config loader can
// point at the exact column.
type PatternError struct {
	Pattern string
	Offset  int
	Msg     string
}

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid pattern %q at offset %d: %s", e.Pattern, e.Offset, e.Msg)
}

// isNameChar reports whether c may appear literally in a pattern.
func isNameChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '_' || c == '-' || c == '.' || c == '/':
		return true
	}
	return false
}

// CompilePattern compiles a tool-name pattern. The syntax is a small,
// closed glob:
//
//   - literal characters a-z A-Z 0-9 _ - . /
//   - * matches any run of characters (including none), ? exactly one
//   - [abc] one of the listed characters, [a-z] a range, [!abc] any other
//     character; '-' is literal first or last in the class
//   - {a,b,c} one of the alternates (each alternate may use the above, but
//     not another {...}); an empty alternate is allowed: list{,_all}
//
// A pattern always matches the whole name. Anything outside this syntax is
// an error (a *[PatternError]), never a silent literal, so a typo cannot
// quietly stop a tool from being intercepted.
func CompilePattern(s string) (Pattern, error) {
	fail := func(off int, format string, args ...any) (Pattern, error) {
		return Pattern{}, &PatternError{Pattern: s, Offset: off, Msg: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return fail(0, "empty pattern")
	}
	if len(s) > maxPatternLen {
		return fail(maxPatternLen, "pattern longer than %d bytes", maxPatternLen)
	}
	// Parse into a sequence of segments: plain token runs and alternate
	// groups, then expand the groups (cartesian product).
	type group struct {
		alts []glob
		lens []int
	}
	var segs []group // a plain run is a group with one alternate
	cur := glob{}
	curStart := 0 // where cur's source text starts
	var inAlt bool
	var altStart int
	var alts []glob
	var lens []int
	flushPlain := func(end int) {
		if len(cur) > 0 {
			segs = append(segs, group{alts: []glob{cur}, lens: []int{end - curStart}})
			cur = glob{}
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isNameChar(c):
			cur = append(cur, tok{kind: tokLit, lit: c})
			i++
		case c == '*':
			// Collapse runs of stars: they mean the same and cost backtracking.
			if n := len(cur); n == 0 || cur[n-1].kind != tokStar {
				cur = append(cur, tok{kind: tokStar})
			}
			i++
		case c == '?':
			cur = append(cur, tok{kind: tokAny})
			i++
		case c == '[':
			t, next, err := parseClass(s, i)
			if err != nil {
				return Pattern{}, err
			}
			cur = append(cur, t)
			i = next
		case c == ']':
			return fail(i, "unmatched ']'")
		case c == '{':
			if inAlt {
				return fail(i, "nested alternates are not supported")
			}
			flushPlain(i)
			inAlt, altStart, alts, lens = true, i, nil, nil
			i++
			curStart = i
		case c == ',':
			if !inAlt {
				return fail(i, "',' outside {...}")
			}
			alts, lens = append(alts, cur), append(lens, i-curStart)
			cur = glob{}
			i++
			curStart = i
		case c == '}':
			if !inAlt {
				return fail(i, "unmatched '}'")
			}
			alts, lens = append(alts, cur), append(lens, i-curStart)
			cur = glob{}
			segs = append(segs, group{alts: alts, lens: lens})
			inAlt = false
			i++
			curStart = i
		case c == '!':
			return fail(i, "'!' is only allowed first in a class: [!abc]")
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return fail(i, "character %q not allowed (use a-z A-Z 0-9 _ - . / and * ? [...] {...})", r)
		}
	}
	if inAlt {
		return fail(altStart, "unclosed alternates '{'")
	}
	flushPlain(len(s))

	total := 1
	for _, g := range segs {
		total *= len(g.alts)
		if total > maxExpansions {
			return fail(0, "alternates expand to more than %d patterns", maxExpansions)
		}
	}
	out, outLens := []glob{{}}, []int{0}
	for _, g := range segs {
		next := make([]glob, 0, len(out)*len(g.alts))
		nextLens := make([]int, 0, len(out)*len(g.alts))
		for pi, prefix := range out {
			for ai, a := range g.alts {
				nextLens = append(nextLens, outLens[pi]+g.lens[ai])
				x := make(glob, 0, len(prefix)+len(a))
				x = append(x, prefix...)
				for _, t := range a {
					// Keep star runs collapsed across segment joins.
					if t.kind == tokStar && len(x) > 0 && x[len(x)-1].kind == tokStar {
						continue
					}
					x = append(x, t)
				}
				next = append(next, x)
			}
		}
		out, outLens = next, nextLens
	}
	return Pattern{src: s, alts: out, lens: outLens}, nil
}

// parseClass parses the class starting at s[i] == '['. It returns the token
// and the index just past the closing ']'.
func parseClass(s string, i int) (tok, int, error) {
	start := i
	fail := func(off int, msg string) (tok, int, error) {
		return tok{}, 0, &PatternError{Pattern: s, Offset: off, Msg: msg}
	}
	t := tok{kind: tokClass}
	i++ // past '['
	if i < len(s) && s[i] == '!' {
		t.neg = true
		i++
	}
	first := i
	for {
		if i >= len(s) {
			return fail(start, "unclosed class '['")
		}
		c := s[i]
		if c == ']' {
			if i == first {
				return fail(i, "empty class")
			}
			return t, i + 1, nil
		}
		if !isNameChar(c) {
			r, _ := utf8.DecodeRuneInString(s[i:])
			if c == '[' || c == '{' || c == '}' || c == ',' || c == '*' || c == '?' || c == '!' {
				return fail(i, fmt.Sprintf("%q not allowed inside a class", r))
			}
			return fail(i, fmt.Sprintf("character %q not allowed in a class", r))
		}
		lo, hi := c, c
		// A range a-z; '-' first or last in the class is literal.
		if i+2 < len(s) && s[i+1] == '-' && s[i+2] != ']' {
			hi = s[i+2]
			if !isNameChar(hi) {
				r, _ := utf8.DecodeRuneInString(s[i+2:])
				return fail(i+2, fmt.Sprintf("character %q not allowed in a class range", r))
			}
			if hi < lo {
				return fail(i, fmt.Sprintf("reversed range %c-%c", lo, hi))
			}
			i += 3
		} else {
			i++
		}
		for b := int(lo); b <= int(hi); b++ {
			t.set[b>>6] |= 1 << (uint(b) & 63)
		}
	}
}

// String returns the pattern's source text.
func (p Pattern) String() string { return p.src }

// IsZero reports whether p is the zero Pattern (which matches nothing).
func (p Pattern) IsZero() bool { return p.src == "" }

// MarshalText returns the pattern's source, so a Pattern round-trips
// through TOML, JSON and flags.
func (p Pattern) MarshalText() ([]byte, error) { return []byte(p.src), nil }

// UnmarshalText compiles text into p.
func (p *Pattern) UnmarshalText(text []byte) error {
	q, err := CompilePattern(string(text))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// Match reports whether name matches the whole pattern. It does not
// allocate.
func (p Pattern) Match(name string) bool {
	for _, g := range p.alts {
		if g.match(name) {
			return true
		}
	}
	return false
}

// matchLen returns the source length of the longest expansion of p that
// matches name, or -1: "{get,list}_pods" matching list_pods counts as
// "list_pods", so alternates do not make a pattern look more specific.
func (p *Pattern) matchLen(name string) int {
	best := -1
	for i, g := range p.alts {
		if p.lens[i] > best && g.match(name) {
			best = p.lens[i]
		}
	}
	return best
}

// match is the classic iterative glob matcher: on a mismatch, retry from the
// last star with it swallowing one more rune. Linear in practice because
// star runs are collapsed.
func (g glob) match(name string) bool {
	ti, ni := 0, 0
	starTi, starNi := -1, 0
	for ni < len(name) {
		if ti < len(g) {
			t := &g[ti]
			switch t.kind {
			case tokStar:
				starTi, starNi = ti, ni
				ti++
				continue
			case tokLit:
				if name[ni] == t.lit {
					ti++
					ni++
					continue
				}
			case tokAny:
				_, n := utf8.DecodeRuneInString(name[ni:])
				ti++
				ni += n
				continue
			case tokClass:
				c := name[ni]
				n := 1
				var in bool
				if c < utf8.RuneSelf {
					in = t.set[c>>6]&(1<<(c&63)) != 0
				} else {
					_, n = utf8.DecodeRuneInString(name[ni:])
				}
				if in != t.neg {
					ti++
					ni += n
					continue
				}
			}
		}
		if starTi < 0 {
			return false
		}
		// Backtrack: the last star takes one more rune.
		_, n := utf8.DecodeRuneInString(name[starNi:])
		starNi += n
		ti, ni = starTi+1, starNi
	}
	for ti < len(g) && g[ti].kind == tokStar {
		ti++
	}
	return ti == len(g)
}
