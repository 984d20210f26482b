package jsonscan

import (
	"testing"

	"github.com/tidwall/gjson"
)

// Unquote gives what gjson gave the exploration tools before it (keys,
// string values), invalid UTF-8 and lone surrogates included.
func TestUnquoteAsGjson(t *testing.T) {
	for _, raw := range []string{`"\ud800"`, `"\udc00x"`, `"\ud83d\ude00"`, "\"\xff\\n\"", `"\u0000\t"`, `"\ud800\u0041"`, `"a\/b"`, "\"\xed\xa0\x80\\n\""} {
		g := gjson.Parse(raw).String()
		u := Unquote([]byte(raw))
		if g != u {
			t.Errorf("%q: gjson %q, Unquote %q", raw, g, u)
		}
	}
}
