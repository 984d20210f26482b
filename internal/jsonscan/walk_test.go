package jsonscan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

var walkCases = []string{
	`{}`, `[]`, `"a"`, `""`, `0`, `-1.5e+3`, `true`, `false`, `null`,
	`{"a":1,"b":[1,2,{"c":"}"}],"d":"x\"y\\","e":{}}`,
	`[ 1 , "two" , [ 3 ] , { "four" : 4 } , null ]`,
	` { "k\u00e9y" : "v" , "q\"" : [ "]" , "[" ] } `,
	`{"a":{"b":{"c":{"d":[[[[["deep"]]]]]}}}}`,
	`[` + strings.Repeat(`"0123456789\"abcdef",`, 40) + `1]`,
	"{\"t\":\"\\u2028x\\ud83d\\ude00\"}",
}

// decoded is what encoding/json makes of a value found by the walkers.
func decoded(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%q is not one value: %v", raw, err)
	}
	return v
}

// Every value's end, and every member and item the walkers find, are what
// encoding/json decodes.
func TestWalkers(t *testing.T) {
	for _, c := range walkCases {
		b := []byte(c)
		i := SkipSpace(b, 0)
		end := ValueEnd(b, i)
		if got := strings.TrimSpace(c); string(b[i:end]) != got {
			t.Errorf("ValueEnd(%q) = %q", c, b[i:end])
			continue
		}
		want := decoded(t, b)
		switch b[i] {
		case '{':
			got := map[string]any{}
			e := Object(b, i, func(ks, ke, at int) int {
				ve := ValueEnd(b, at)
				got[Unquote(b[ks:ke])] = decoded(t, b[at:ve])
				return ve
			})
			if e != end || !reflect.DeepEqual(got, want) {
				t.Errorf("Object(%q) = %v ending at %d, want %v ending at %d", c, got, e, want, end)
			}
		case '[':
			got := []any{}
			e := Array(b, i, func(at int) int {
				ve := ValueEnd(b, at)
				got = append(got, decoded(t, b[at:ve]))
				return ve
			})
			if e != end || !reflect.DeepEqual(got, want) {
				t.Errorf("Array(%q) = %v ending at %d, want %v ending at %d", c, got, e, want, end)
			}
		}
	}
}

func TestWalkersStop(t *testing.T) {
	b := []byte(`{"a":1,"b":2,"c":3}`)
	var keys []string
	Object(b, 0, func(ks, ke, at int) int {
		keys = append(keys, Unquote(b[ks:ke]))
		if len(keys) == 2 {
			return -1
		}
		return ValueEnd(b, at)
	})
	if !reflect.DeepEqual(keys, []string{"a", "b"}) {
		t.Fatalf("keys %v", keys)
	}
	n := 0
	Array([]byte(`[1,2,3]`), 0, func(at int) int { n++; return -1 })
	if n != 1 {
		t.Fatalf("%d items after a stop", n)
	}
}

func TestUnquote(t *testing.T) {
	for raw, want := range map[string]string{
		`"plain"`:              "plain",
		`"a\"b\\c\/d\n"`:       "a\"b\\c/d\n",
		`"\u00e9\ud83d\ude00"`: "é😀",
		`"\ud800x"`:            "\ufffdx",
		`""`:                   "",
		`x`:                    "",
		`"unterminated`:        "",
	} {
		if got := Unquote([]byte(raw)); got != want {
			t.Errorf("Unquote(%s) = %q, want %q", raw, got, want)
		}
	}
}

// On any input the walkers end, within b; on valid JSON (and UTF-8: a key
// without escapes is given as written) they agree with encoding/json.
func FuzzWalkers(f *testing.F) {
	for _, c := range walkCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"a":`))
	f.Add([]byte(`["\`))
	f.Fuzz(func(t *testing.T, b []byte) {
		i := SkipSpace(b, 0)
		end := ValueEnd(b, i)
		if end < i && i < len(b) || end > len(b) {
			t.Fatalf("ValueEnd = %d of %d", end, len(b))
		}
		walk := func(at int) int {
			if at < 0 || at > len(b) {
				t.Fatalf("offset %d of %d", at, len(b))
			}
			return ValueEnd(b, at)
		}
		if i < len(b) {
			if e := Object(b, i, func(ks, ke, at int) int { _ = Unquote(b[ks:ke]); return walk(at) }); e > len(b) {
				t.Fatalf("Object end %d of %d", e, len(b))
			}
			if e := Array(b, i, walk); e > len(b) {
				t.Fatalf("Array end %d of %d", e, len(b))
			}
		}
		if !Valid(b) || !utf8.Valid(b) || i >= len(b) || b[i] != '{' && b[i] != '[' {
			return
		}
		want := decoded(t, b)
		if b[i] == '{' {
			got := map[string]any{}
			Object(b, i, func(ks, ke, at int) int {
				ve := ValueEnd(b, at)
				got[Unquote(b[ks:ke])] = decoded(t, b[at:ve])
				return ve
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Object: %v, want %v", got, want)
			}
		}
	})
}

func TestLookup(t *testing.T) {
	b := []byte(` {"a":1,"_meta":{"x":[1]},"r\u0065sultType":"task","a":"last"} `)
	for key, want := range map[string]string{"a": `"last"`, "_meta": `{"x":[1]}`, "resultType": `"task"`, "b": ""} {
		got, ok := Lookup(b, key)
		if string(got) != want || ok != (want != "") {
			t.Errorf("Lookup(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	if _, ok := Lookup([]byte(`[1]`), "a"); ok {
		t.Error("Lookup in an array")
	}
}
