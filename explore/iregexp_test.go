package explore

import (
	"strings"
	"testing"
)

func TestIRegexp(t *testing.T) {
	for _, tc := range []struct {
		pat   string
		full  bool
		match []string
		not   []string
	}{
		{pat: "a.c", full: true, match: []string{"abc", "a☃c"}, not: []string{"a\nc", "a\rc", "abcd"}},
		{pat: "b", match: []string{"abc"}, not: []string{"xyz"}},
		{pat: "^ab", match: []string{"abc"}, not: []string{"cab"}},
		{pat: "bc$", match: []string{"abc"}, not: []string{"abcd"}},
		{pat: `\p{Lu}+`, full: true, match: []string{"ÀB"}, not: []string{"ab"}},
		{pat: `[^a-c\-]x`, full: true, match: []string{"dx"}, not: []string{"ax", "-x"}},
		{pat: `(ab|cd){2}`, full: true, match: []string{"abcd"}, not: []string{"ab"}},
		{pat: `\.\*`, full: true, match: []string{".*"}, not: []string{"ab"}},
	} {
		re, err := compileIRegexp(tc.pat, tc.full)
		if err != nil {
			t.Errorf("%q: %v", tc.pat, err)
			continue
		}
		for _, s := range tc.match {
			if !re.MatchString(s) {
				t.Errorf("%q does not match %q", tc.pat, s)
			}
		}
		for _, s := range tc.not {
			if re.MatchString(s) {
				t.Errorf("%q matches %q", tc.pat, s)
			}
		}
	}
	// Not I-Regexp (RE2 or Perl syntax RFC 9485 leaves out): never compiled.
	for _, pat := range []string{`\d`, `(?i)a`, `a{,2}`, `[a`, `a)`, `*a`, `\p{IsBasicLatin}`, `(?:a)`, `\w+`} {
		if _, err := compileIRegexp(pat, false); err == nil {
			t.Errorf("%q compiled; it is not I-Regexp", pat)
		}
	}
}

// FuzzIRegexp: no pattern panics the translation, and a pattern of
// ordinary characters matches itself.
func FuzzIRegexp(f *testing.F) {
	for _, s := range []string{"a.c", `[^\p{L}-]`, "(a|b)*{2,3}", `\p{Nd}`, "^x$"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pat string) {
		re, err := compileIRegexp(pat, true)
		if err != nil || strings.ContainsAny(pat, `.^$*+?{}[]()|\`) {
			return
		}
		if !re.MatchString(pat) {
			t.Fatalf("%q does not match itself", pat)
		}
	})
}
