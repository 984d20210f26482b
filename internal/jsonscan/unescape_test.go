package jsonscan

import (
	"encoding/json"
	"fmt"
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

// TestUnescapeInHalves: a literal big enough to be unescaped in two halves
// at once is what encoding/json decodes, in place (written from just before
// it, as a tool result's text is) and into a buffer of its own (the literal
// then left as it was), wherever the middle falls: in a run of
// backslashes, in surrogate pairs, in \u escapes, or with no escape after
// it.
func TestUnescapeInHalves(t *testing.T) {
	defer func(n int) { parallelUnescapeMin = n }(parallelUnescapeMin)
	parallelUnescapeMin = 64 << 10 // small literals, many cases
	half := parallelUnescapeMin/2 + 1
	for name, tail := range map[string]string{
		"json":        strings.Repeat(`{\"k\":\"v\\\\\"},`, 200),
		"backslashes": strings.Repeat(`\\`, 300) + `\"x`,
		"pairs":       strings.Repeat(`\ud83d\ude00`, 300) + `\n`,
		"u":           strings.Repeat(`\u00e9`, 300),
		"plain":       strings.Repeat("x", 300),
	} {
		for shift := range 8 {
			// The middle falls in the tail, at shift.
			lit := strings.Repeat("a", half-shift) + tail + strings.Repeat(`\"b`, half/3)
			var want string
			if err := json.Unmarshal([]byte(`"`+lit+`"`), &want); err != nil {
				t.Fatal(err)
			}
			own := make([]byte, len(lit))
			lb := []byte(lit)
			if n := Unescape(own, lb, len(lb)); string(own[:n]) != want {
				t.Fatalf("%s, shift %d, own buffer: %s", name, shift, differ(own[:n], want))
			}
			if string(lb) != lit {
				t.Fatalf("%s, shift %d, own buffer: the literal was written over: %s", name, shift, differ(lb, lit))
			}
			raw := []byte(`"` + lit + `"`)
			if n := Unescape(raw, raw[1:len(raw)-1], len(lit)); string(raw[:n]) != want {
				t.Fatalf("%s, shift %d, in place: %s", name, shift, differ(raw[:n], want))
			}
		}
	}
}

// differ says where got first differs from want.
func differ(got []byte, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("differs at byte %d of %d: %q, want %q", i, len(want), got[i:min(len(got), i+40)], want[i:min(len(want), i+40)])
}
