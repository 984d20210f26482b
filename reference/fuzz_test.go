package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// fuzzFiles are the stored outputs the fuzz references name: odd names,
// text, JSON, an empty file, a big one.
var fuzzFiles = map[string]string{
	"plain.txt":                  "alpha\nbeta\ngamma\n",
	"obj.json":                   `{"k":{"deep":[1,"two",null,true]},"s":"é\u2028\"q\"","n":-0.5e3}`,
	"odd name é \"q\" \\ ☃.json": `[{"a b":1},{"a b":2}]`,
	"empty.txt":                  "",
	"big.txt":                    strings.Repeat("0123456789abcdef\n", 1<<12),
	".hidden-ish name":           "x",
}

// fuzzNames are what the references name: the files, and some that are
// not there or not the agent's.
var fuzzNames = []string{"plain.txt", "obj.json", "odd name é \"q\" \\ ☃.json", "empty.txt", "big.txt", ".hidden-ish name", "missing.json", "../../bob/scratchpad/bob-secret.json", "/etc/passwd", ""}

// gen draws decisions from fuzz data, zero once it runs out.
type gen struct{ b []byte }

func (g *gen) n(k int) int {
	if len(g.b) == 0 || k <= 1 {
		return 0
	}
	x := int(g.b[0])
	g.b = g.b[1:]
	return x % k
}

// tree builds a random argument value as JSON text, with references in
// it, and the value expected once they are replaced (ok false when a
// reference is expected to be refused).
func (g *gen) tree(depth int, refs *int) (text string, want any, ok bool) {
	switch k := g.n(8); {
	case depth > 6 || k == 0:
		return `"leaf ☃ \u0000"`, "leaf ☃ \x00", true
	case k == 1:
		n := g.n(1000) - 500
		return fmt.Sprint(n), float64(n), true
	case k == 2 || k == 3:
		*refs++
		return g.ref()
	case k == 4 || k == 5:
		var parts []string
		obj := map[string]any{}
		good := true
		for i := range g.n(4) {
			key := []string{"a", "é", "$scratchpad2", "with space", "\\u0024x", "k" + fmt.Sprint(i)}[g.n(6)]
			if _, dup := obj[jsonUnquote(key)]; dup {
				continue
			}
			t, w, ok := g.tree(depth+1, refs)
			good = good && ok
			parts = append(parts, fmt.Sprintf("%q:%s", key, t))
			obj[jsonUnquote(key)] = w
		}
		return "{" + strings.Join(parts, ",") + "}", obj, good
	default:
		var parts []string
		arr := []any{}
		good := true
		for range g.n(5) {
			t, w, ok := g.tree(depth+1, refs)
			good = good && ok
			parts = append(parts, t)
			arr = append(arr, w)
		}
		return "[" + strings.Join(parts, ",") + "]", arr, good
	}
}

// jsonUnquote is what a key written as %q decodes to in JSON.
func jsonUnquote(k string) string {
	var s string
	if json.Unmarshal([]byte(fmt.Sprintf("%q", k)), &s) != nil {
		return k
	}
	return s
}

// ref builds one reference and the value it must become.
func (g *gen) ref() (string, any, bool) {
	name := fuzzNames[g.n(len(fuzzNames))]
	body, exists := fuzzFiles[name]
	fname, _ := json.Marshal(name)
	switch g.n(4) {
	case 0: // the whole file as text
		return fmt.Sprintf(`{"$scratchpad":{"file":%s,"as":"text"}}`, fname), body, exists
	case 1: // the whole file, as its value when it is JSON
		var v any
		if json.Unmarshal([]byte(body), &v) == nil {
			return fmt.Sprintf(`{"$scratchpad":{"file":%s}}`, fname), v, exists
		}
		return fmt.Sprintf(`{"$scratchpad":{"file":%s}}`, fname), body, exists
	case 2: // lines
		a := g.n(4) + 1
		b := a + g.n(3)
		lines := strings.SplitAfter(body, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		want := ""
		if a <= len(lines) {
			want = strings.Join(lines[a-1:min(b, len(lines))], "")
		}
		return fmt.Sprintf(`{"$scratchpad":{"file":%s,"lines":"%d-%d"}}`, fname, a, b), want, exists && a <= len(lines)
	default: // a path
		var v any
		if json.Unmarshal([]byte(body), &v) != nil {
			return fmt.Sprintf(`{"$scratchpad":{"file":%s,"path":"$.k"}}`, fname), nil, false
		}
		if m, ok := v.(map[string]any); ok {
			return fmt.Sprintf(`{"$scratchpad":{"file":%s,"path":"$.k.deep[1]","as":"json"}}`, fname), m["k"].(map[string]any)["deep"].([]any)[1], exists
		}
		return fmt.Sprintf(`{"$scratchpad":{"file":%s,"path":"$[*]['a b']"}}`, fname), []any{1.0, 2.0}, exists
	}
}

// FuzzResolve builds arguments with references at random places (nested
// in objects and arrays, odd file names, files of every kind and size,
// names that are not the agent's) and holds the result to the value
// expected: every reference replaced by what it names, the rest as it
// was; or, for a reference that cannot be, a refusal that changed
// nothing and says why in one JSON object.
func FuzzResolve(f *testing.F) {
	for _, seed := range []string{"", "\x02", "\x04\x03\x02\x00\x01", "\x05\x04\x02\x02\x01\x02\x03\x03", "\x06\x03\x02\x07\x02\x03\x01\x02\x01\x00\x02\x05\x03",
		"\x04\x02\x01\x02\x02\x04\x03\x01\x05\x00\x02\x02", strings.Repeat("\x05\x03", 40)} {
		f.Add([]byte(seed))
	}
	files := map[string]string{}
	for k, v := range fuzzFiles {
		files[k] = v
	}
	s := newStore(f, files)
	s.env.MaxBytes = 1 << 20
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{b: data}
		refs := 0
		var parts []string
		want := map[string]any{}
		good := true
		for i := range g.n(4) + 1 {
			text, w, ok := g.tree(0, &refs)
			good = good && ok
			parts = append(parts, fmt.Sprintf(`"p%d":%s`, i, text))
			want[fmt.Sprint("p", i)] = w
		}
		store := g.n(2) == 1
		if store {
			parts = append(parts[:len(parts)/2], append([]string{`"$scratchpad":{"store":true}`}, parts[len(parts)/2:]...)...)
		}
		args := "{" + strings.Join(parts, ",") + "}"
		if !json.Valid([]byte(args)) {
			t.Fatalf("the generator wrote invalid JSON: %s", args)
		}
		got, err := Resolve(ctx, s.env, Call{Args: json.RawMessage(args)})
		if err != nil {
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("error %v is not an *Error", err)
			}
			if !json.Valid(e.JSON()) {
				t.Fatalf("the answer is not JSON: %s", e.JSON())
			}
			if good {
				t.Fatalf("refused %s\n%s", args, e.JSON())
			}
			if string(got.Args) != args {
				t.Fatalf("refused, yet the arguments changed")
			}
			return
		}
		if !good {
			t.Fatalf("resolved what should have been refused: %s\n%.300s", args, got.Args)
		}
		var out any
		if err := json.Unmarshal(got.Args, &out); err != nil {
			t.Fatalf("resolved arguments are not JSON: %v\n%.300s", err, got.Args)
		}
		if !reflect.DeepEqual(out, any(want)) {
			t.Fatalf("args %s\nresolved %.500s\nwant %.500v", args, got.Args, want)
		}
		if len(got.Refs) != refs || got.Options.Store != store {
			t.Fatalf("%d references resolved, store %v; want %d, %v", len(got.Refs), got.Options.Store, refs, store)
		}
		if refs == 0 && !store && !bytes.Equal(got.Args, []byte(args)) {
			t.Fatalf("nothing to resolve, yet the bytes changed")
		}
	})
}

// FuzzResolveAnyArguments runs Resolve on arbitrary bytes: it never
// panics, refuses only with an *Error, and what it resolves is JSON.
func FuzzResolveAnyArguments(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":{"$scratchpad":{"file":"plain.txt"}}}`, `{"$scratchpad":{"store":true}}`, `{"a":[{"\u0024scratchpad":{"file":"obj.json","path":"$..*"}}]}`,
		`{"a":{"$scratchpad":{"file":"obj.json","path":"$[?@"}}}`, `[{"$scratchpad":1}]`, `{"a":{"$scratchpad":{"file":"big.txt","lines":"1-"}}}`, `{"a":` + strings.Repeat(`[`, 3000) + strings.Repeat(`]`, 3000) + `}`} {
		f.Add([]byte(seed))
	}
	s := newStore(f, fuzzFiles)
	f.Fuzz(func(t *testing.T, args []byte) {
		got, err := Resolve(context.Background(), s.env, Call{Args: args, Schema: NewSchema(json.RawMessage(anySchema))})
		if err != nil {
			e, ok := errors.AsType[*Error](err)
			if !ok || !json.Valid(e.JSON()) {
				t.Fatalf("error %v (%T) is not an *Error with a JSON answer", err, err)
			}
			return
		}
		if len(got.Refs) > 0 && !json.Valid(got.Args) {
			t.Fatalf("resolved arguments are not JSON: %.300s", got.Args)
		}
	})
}
