package explore

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"
)

// match() and search() take I-Regexp (RFC 9485) patterns: a small regular
// expression language meant to mean the same everywhere. compileIRegexp
// checks a pattern against its grammar and translates it to RE2, where
// the two differ: . is any character but \n and \r, a group never
// captures. ^ and $, ordinary characters in RFC 9485's grammar, anchor at
// the start and end of the string, as the compliance suite's "explicit
// caret" and "explicit dollar" cases have them (and as ECMAScript and
// XSD-derived engines read them). A pattern that is not I-Regexp is
// an error, which match() and search() answer with false (RFC 9535
// §2.4.6), never with a parse error.

// errNotIRegexp is a pattern outside RFC 9485's grammar.
var errNotIRegexp = errors.New("not an I-Regexp (RFC 9485) pattern")

// compileIRegexp compiles an I-Regexp; match() (full) anchors it at both
// ends.
func compileIRegexp(pat string, full bool) (*regexp.Regexp, error) {
	t := &ireTranslator{src: pat}
	if err := t.branches(0); err != nil {
		return nil, err
	}
	if t.pos != len(pat) {
		return nil, errNotIRegexp
	}
	re := t.out.String()
	if full {
		re = `\A(?:` + re + `)\z`
	}
	return regexp.Compile(re)
}

type ireTranslator struct {
	src string
	pos int
	out strings.Builder
}

func (t *ireTranslator) peek() (rune, int) {
	if t.pos >= len(t.src) {
		return -1, 0
	}
	r, n := utf8.DecodeRuneInString(t.src[t.pos:])
	if r == utf8.RuneError && n <= 1 {
		return -2, 1
	}
	return r, n
}

// branches: branch *("|" branch).
func (t *ireTranslator) branches(depth int) error {
	if depth > maxFilterDepth {
		return errNotIRegexp
	}
	for {
		if err := t.branch(depth); err != nil {
			return err
		}
		if r, _ := t.peek(); r != '|' {
			return nil
		}
		t.pos++
		t.out.WriteByte('|')
	}
}

// branch: *piece, a piece being an atom and an optional quantifier.
func (t *ireTranslator) branch(depth int) error {
	for {
		r, n := t.peek()
		switch {
		case r == -1 || r == '|' || r == ')':
			return nil
		case r == -2:
			return errNotIRegexp
		case r == '(':
			t.pos++
			t.out.WriteString("(?:")
			if err := t.branches(depth + 1); err != nil {
				return err
			}
			if r, _ := t.peek(); r != ')' {
				return errNotIRegexp
			}
			t.pos++
			t.out.WriteByte(')')
		case r == '.':
			t.pos++
			t.out.WriteString(`[^\n\r]`)
		case r == '[':
			if err := t.class(); err != nil {
				return err
			}
		case r == '\\':
			if err := t.escape(false); err != nil {
				return err
			}
		case strings.ContainsRune("*+?{}]", r):
			return errNotIRegexp // a quantifier without an atom, or a stray bracket
		case r == '^':
			t.pos++
			t.out.WriteString(`\A`)
		case r == '$':
			t.pos++
			t.out.WriteString(`\z`)
		default:
			t.pos += n
			t.out.WriteString(regexp.QuoteMeta(string(r)))
		}
		if err := t.quantifier(); err != nil {
			return err
		}
	}
}

// quantifier: *, +, ? or {n}, {n,}, {n,m}.
func (t *ireTranslator) quantifier() error {
	r, _ := t.peek()
	switch r {
	case '*', '+', '?':
		t.pos++
		t.out.WriteRune(r)
		return nil
	case '{':
	default:
		return nil
	}
	start := t.pos
	t.pos++
	digits := func() bool {
		s := t.pos
		for t.pos < len(t.src) && isDigit(t.src[t.pos]) {
			t.pos++
		}
		return t.pos > s
	}
	if !digits() {
		return errNotIRegexp
	}
	if t.pos < len(t.src) && t.src[t.pos] == ',' {
		t.pos++
		digits()
	}
	if t.pos >= len(t.src) || t.src[t.pos] != '}' {
		return errNotIRegexp
	}
	t.pos++
	t.out.WriteString(t.src[start:t.pos])
	return nil
}

// singleEsc are the characters \ may escape (SingleCharEsc), besides n, r
// and t.
const singleEsc = `()*+-.?[\]^{|}`

// escape translates \x at the cursor: a single-character escape or a
// category \p{…} / \P{…}. In a class (inClass) it writes what fits there.
func (t *ireTranslator) escape(inClass bool) error {
	t.pos++
	r, n := t.peek()
	switch {
	case r == 'n' || r == 'r' || r == 't':
		t.pos += n
		t.out.WriteByte('\\')
		t.out.WriteRune(r)
	case r >= 0 && r < utf8.RuneSelf && strings.ContainsRune(singleEsc, r):
		t.pos += n
		t.out.WriteByte('\\')
		t.out.WriteRune(r)
	case r == 'p' || r == 'P':
		t.pos += n
		end := strings.IndexByte(t.src[t.pos:], '}')
		if !strings.HasPrefix(t.src[t.pos:], "{") || end < 0 {
			return errNotIRegexp
		}
		prop := t.src[t.pos+1 : t.pos+end]
		if !isCategory(prop) {
			return errNotIRegexp
		}
		t.pos += end + 1
		t.out.WriteString(`\` + string(r) + "{" + prop + "}")
	default:
		return errNotIRegexp
	}
	return nil
}

// isCategory is a Unicode general category I-Regexp names (IsCategory).
// RE2 has all but Cn (unassigned), which is refused as not supported.
func isCategory(p string) bool {
	switch len(p) {
	case 1:
		return strings.Contains("LMNPZSC", p)
	case 2:
		subs := map[byte]string{'L': "lmotu", 'M': "cen", 'N': "dlo", 'P': "cdefios", 'Z': "lps", 'S': "ckmo", 'C': "cfo"}
		s, ok := subs[p[0]]
		return ok && strings.IndexByte(s, p[1]) >= 0
	}
	return false
}

// class translates a character class [^…] at the cursor.
func (t *ireTranslator) class() error {
	t.pos++
	t.out.WriteByte('[')
	if r, _ := t.peek(); r == '^' {
		t.pos++
		t.out.WriteByte('^')
	}
	first := true
	for {
		r, n := t.peek()
		switch {
		case r < 0:
			return errNotIRegexp
		case r == ']' && !first:
			t.pos++
			t.out.WriteByte(']')
			return nil
		case r == '-':
			// A - only first or last in the class.
			t.pos++
			if nr, _ := t.peek(); !first && nr != ']' {
				return errNotIRegexp
			}
			t.out.WriteString(`\-`)
		case r == '\\':
			if err := t.escape(true); err != nil {
				return err
			}
			if err := t.rangeEnd(); err != nil {
				return err
			}
		case r == '[' || r == ']':
			return errNotIRegexp
		default:
			t.pos += n
			t.out.WriteString(regexp.QuoteMeta(string(r)))
			if err := t.rangeEnd(); err != nil {
				return err
			}
		}
		first = false
	}
}

// rangeEnd translates the -x of a range a-x after its first character.
func (t *ireTranslator) rangeEnd() error {
	if r, _ := t.peek(); r != '-' || t.pos+1 >= len(t.src) || t.src[t.pos+1] == ']' {
		return nil
	}
	t.pos++
	t.out.WriteByte('-')
	r, n := t.peek()
	switch {
	case r < 0 || r == '[' || r == ']' || r == '-':
		return errNotIRegexp
	case r == '\\':
		t.pos++
		r, n = t.peek()
		if !(r == 'n' || r == 'r' || r == 't' || r >= 0 && r < utf8.RuneSelf && strings.ContainsRune(singleEsc, r)) {
			return errNotIRegexp
		}
		t.pos += n
		t.out.WriteByte('\\')
		t.out.WriteRune(r)
	default:
		t.pos += n
		t.out.WriteString(regexp.QuoteMeta(string(r)))
	}
	return nil
}
