package jsonscan

import (
	"strings"
	"testing"
)

// FuzzCutJoins: a literal cut where [Cut] says, each part unescaped on its
// own and joined, is the literal unescaped whole; and a cut is always the
// start of an escape that is not a \u.
func FuzzCutJoins(f *testing.F) {
	for _, s := range []string{`plain`, `a\"b\\c\/d\n`, `\\\\\"x\"`, `\ud83d\ude00\"\ud83d\"\u0041`, `{\"k\":\"v\",\"n\":[1,2]}`,
		`\\`, `\u00e9\u00e9\u00e9\n`, `x\\\"` + strings.Repeat(`\"ab`, 10)} {
		for _, from := range []int{0, 1, 2, 3, 5, 8} {
			f.Add(s, from)
		}
	}
	f.Fuzz(func(t *testing.T, s string, from int) {
		if !Valid([]byte(`"` + s + `"`)) {
			return
		}
		b := []byte(s)
		from = max(0, from) % (len(b) + 1)
		c := Cut(b, from)
		if c < 0 {
			return
		}
		if c < from || c+1 >= len(b) || b[c] != '\\' || b[c+1] == 'u' {
			t.Fatalf("%q from %d: cut at %d", s, from, c)
		}
		whole := make([]byte, len(b))
		whole = whole[:Unescape(whole, b, len(b))]
		parts := make([]byte, len(b))
		n := Unescape(parts, b[:c], c)
		n += Unescape(parts[n:], b[c:], len(b)-c)
		if string(parts[:n]) != string(whole) {
			t.Fatalf("%q cut at %d: %q, want %q", s, c, parts[:n], whole)
		}
	})
}
