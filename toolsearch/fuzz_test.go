package toolsearch

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzSignature: any bytes as a schema give one short printable line and
// never a panic (the fuzzer reports a panic as a failure).
func FuzzSignature(f *testing.F) {
	if b, err := os.ReadFile("testdata/signature.txtar"); err == nil {
		_, files := parseTxtar(b)
		for _, file := range files {
			if strings.HasSuffix(file.name, ".json") {
				f.Add(file.data)
			}
		}
	}
	f.Add([]byte(`{"properties":{"a":{"anyOf":[{"anyOf":[{"items":{"items":{"type":"string"}}}]}]}}}`))
	f.Add([]byte(`{"properties":{"a":{"$ref":"\u0000"}},"required":["a","a"]}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		sig := Signature(schema)
		if !utf8.ValidString(sig) && utf8.Valid(schema) {
			t.Errorf("invalid UTF-8 from valid input: %q", sig)
		}
		for _, r := range sig {
			if unicode.IsControl(r) {
				t.Fatalf("control character %U in %q", r, sig)
			}
		}
		// Each shown argument costs at most a name, a type of bounded
		// nesting and a separator.
		if max := maxParams*2000 + 100; len(sig) > max {
			t.Errorf("signature of %d bytes (> %d) from a %d-byte schema", len(sig), max, len(schema))
		}
		line := FormatLine(Tool{Name: "t", Description: string(schema), InputSchema: schema})
		if strings.ContainsRune(line, '\n') {
			t.Errorf("FormatLine has a newline: %q", line)
		}
	})
}

// FuzzSearch: any query, any tool added to the catalogue, gives at most
// limit hits in score order, each naming its tool, and Closest and Format
// never panic.
func FuzzSearch(f *testing.F) {
	f.Add("list open issues", "x__y", "a tool", []byte(`{"properties":{"q":{"type":"string"}}}`), 5)
	f.Add("GitHub__List_Issues", "", "", []byte(nil), 0)
	f.Add("pull request merge request how many", "ÉtéCafé__getHTTPThing", "é. e.g. x", []byte(`[`), -3)
	f.Add(strings.Repeat("a_", 300), "__", "\x00\xff", []byte(`{}`), 1000)
	tools, _ := loadCatalogue(f)
	f.Fuzz(func(t *testing.T, query, name, desc string, schema []byte, limit int) {
		all := append(append([]Tool(nil), tools...), Tool{Name: name, Server: "fuzz", Description: desc, InputSchema: json.RawMessage(schema)})
		ix := NewIndex(all)
		hits := ix.Search(query, limit)
		want := limit
		if want <= 0 {
			want = DefaultLimit
		}
		want = min(want, MaxLimit)
		if len(hits) > want {
			t.Fatalf("%d hits for limit %d", len(hits), limit)
		}
		for i, h := range hits {
			if h.Tool < 0 || h.Tool >= len(all) || all[h.Tool].Name != h.Name {
				t.Fatalf("hit %+v does not name its tool", h)
			}
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("hits out of order: %+v", hits)
			}
		}
		if out := ix.Format(hits); strings.Count(out, "\n") != len(hits) {
			t.Fatalf("Format gave %d lines for %d hits: %q", strings.Count(out, "\n"), len(hits), out)
		}
		if got := ix.Closest(query, 3); len(got) > 3 {
			t.Fatalf("Closest gave %d names", len(got))
		}
		_ = OneLine(desc, limit)
	})
}

// TestHugeInputs: inputs far larger than any real one stay linear (this
// would time out, not fail, if one were quadratic).
func TestHugeInputs(t *testing.T) {
	tools, _ := loadCatalogue(t)
	words := strings.Repeat("list issues pods word", 50_000)
	huge := append(append([]Tool(nil), tools...), Tool{Name: strings.Repeat("a_b_", 50_000), Description: words})
	ix := NewIndex(huge)
	ix.Search(words, 5)
	ix.Closest(words, 3)
	var props strings.Builder
	props.WriteString(`{"type":"object","required":[`)
	for i := range 50_000 {
		if i > 0 {
			props.WriteByte(',')
		}
		props.WriteString(`"p` + strconv.Itoa(i) + `"`)
	}
	props.WriteString(`],"properties":{`)
	for i := range 50_000 {
		if i > 0 {
			props.WriteByte(',')
		}
		props.WriteString(`"p` + strconv.Itoa(i) + `":{"type":"string"}`)
	}
	props.WriteString(`}}`)
	if sig := Signature(json.RawMessage(props.String())); len(sig) > 2000 {
		t.Errorf("signature of %d bytes for 50,000 arguments", len(sig))
	}
}

// TestDeepSchemaNoCrash: schemas nested a million deep, which took the
// recursive validator this package used past the goroutine stack limit
// (a fatal error, not a panic), give no signature and are indexed; the
// limit of 64 levels is where it was.
func TestDeepSchemaNoCrash(t *testing.T) {
	deepProp := func(n int) string {
		// n levels: the object, its properties, n-3 arrays, a string.
		return `{"type":"object","properties":{"a":` + strings.Repeat(`{"type":"array","items":`, n-3) + `{"type":"string"}` + strings.Repeat("}", n-3) + `}}`
	}
	for _, tt := range []struct {
		name, schema string
		want         string
	}{
		{"a million [", strings.Repeat("[", 1e6), ""},
		{"a million [ closed", strings.Repeat("[", 1e6) + strings.Repeat("]", 1e6), ""},
		{"a million objects", strings.Repeat(`{"a":`, 1e6) + "1" + strings.Repeat("}", 1e6), ""},
		{"a million in properties", `{"type":"object","properties":{"a":` + strings.Repeat("[", 1e6) + `}}`, ""},
		{"64 levels", deepProp(64), "a?: …[][][][][]"},
		{"65 levels", deepProp(65), ""},
	} {
		if got := Signature(json.RawMessage(tt.schema)); got != tt.want {
			t.Errorf("%s: Signature = %q, want %q", tt.name, got, tt.want)
		}
		ix := NewIndex([]Tool{{Name: "deep", Description: "a tool", InputSchema: json.RawMessage(tt.schema)}})
		if hits := ix.Search("tool", 1); len(hits) != 1 {
			t.Errorf("%s: the tool is not found: %v", tt.name, hits)
		}
	}
}
