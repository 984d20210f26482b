package divert

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

var indentCases = []string{
	`{}`, `[]`, `1`, `"s"`, `null`,
	`{"a":[],"b":{},"c":[{}],"d":[[],[1]]}`,
	` { "a" : [ 1 , 2.5e-3 , -0 , true , false , null ] , "b\"\\" : "x\\\"y" , "é" : "\u2028<&>" } `,
	`[{"k":"v","n":{"m":[1,{"z":[]}]}},{"k":"w"}]`,
	"[\n\t1,\r\n 2\n]",
}

func TestIndentIsJSONIndent(t *testing.T) {
	cases := append([]string{string(testupstream.Listing(50)), testupstream.NDJSON(1)}, indentCases...)
	for _, in := range cases {
		checkIndent(t, strings.TrimSpace(in))
	}
}

// FuzzIndentIsJSONIndent: on any JSON, indentTo writes what json.Indent
// does, gives every array the sketch asks about its length and every
// container it walks its end, and tells the layout the input was in.
func FuzzIndentIsJSONIndent(f *testing.F) {
	for _, s := range indentCases {
		f.Add(s)
	}
	// Strings about as long as what indentTo looks at itself, with an
	// escape or the quote on either side of that edge.
	for n := shortString - 3; n <= shortString+3; n++ {
		// (A delimiter after an escaped quote: a string cut there would
		// be laid out as separators.)
		f.Add(`["` + strings.Repeat("a", n) + `\", [b",{"` + strings.Repeat("k", n) + `":"` + strings.Repeat("v", n-1) + `\\"}]`)
	}
	f.Add(string(testupstream.Listing(3)))
	f.Fuzz(func(t *testing.T, s string) {
		in := bytes.TrimSpace([]byte(s))
		if !json.Valid(in) || !jsonscan.Valid(in) { // (jsonscan's: no deeper than MaxDepth)
			return
		}
		checkIndent(t, string(in))
	})
}

func checkIndent(t *testing.T, in string) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, []byte(in), "", "  "); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	w := bufio.NewWriter(&got)
	lengths, ends := arrayLengths{}, containerEnds{}
	lay, err := indentTo(w, []byte(in), lengths, ends)
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Flush()
	if got.String() != want.String() {
		t.Fatalf("%s:\n got %s\nwant %s", in, got.String(), want.String())
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, []byte(in))
	wantLay := layoutOther
	switch {
	case in == want.String():
		wantLay = layoutIndented
	case in == compact.String():
		wantLay = layoutCompact
	case in == strings.NewReplacer(",", ", ", ":", ": ").Replace(compact.String()) && !strings.ContainsAny(compact.String(), `"`):
		wantLay = layoutSpaced // (only checked where no string holds a separator)
	}
	if lay != wantLay && (wantLay != layoutOther || !strings.ContainsAny(in, `"`)) {
		t.Fatalf("%s: layout %d, want %d", in, lay, wantLay)
	}
	// Every array the sketch asks about has its length, every container
	// it walks its end. (Arrays and objects that are the root or an
	// object's member, to depth 3; items of an array are not asked about.)
	root := gjson.Parse(in)
	var walk func(v gjson.Result, depth int, inArray bool)
	walk = func(v gjson.Result, depth int, inArray bool) {
		if depth > 3 {
			return
		}
		if v.IsArray() && !inArray {
			n, ok := lengths[v.Index]
			if !ok || n != count(v) {
				t.Fatalf("%s: array at %d: length %d (%v), want %d", in, v.Index, n, ok, count(v))
			}
		}
		if (v.IsArray() || v.IsObject()) && !inArray {
			if e, ok := ends[v.Index]; !ok || e != v.Index+len(v.Raw) {
				t.Fatalf("%s: container at %d: end %d (%v), want %d", in, v.Index, e, ok, v.Index+len(v.Raw))
			}
		}
		v.ForEach(func(_, c gjson.Result) bool { walk(c, depth+1, inArray || v.IsArray()); return true })
	}
	walk(root, 0, false)
}

func TestViewUnescapesAsEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", "a\"b\\c/d\b\f\n\r\t", "é ü 中 😀", "\u2028\u2029<&>", string([]byte{0xff, 'a', 0xc3})}
	for _, s := range texts {
		b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}})
		v, err := view(b, false)
		if err != nil || string(v.text(-1, false)) != decoded(b) {
			t.Fatalf("%q: %q, %v", s, v.text(-1, false), err)
		}
	}
	// Escapes as other encoders write them, lone surrogates, invalid bytes.
	for _, lit := range []string{`"\u00e9\ud83d\ude00\/"`, `"\ud800x"`, `"\udc00\ud800\u0041"`, "\"\xffa\xc3\"", `"\u0000"`} {
		raw := []byte(`{"content":[{"type":"text","text":` + lit + `}]}`)
		v, err := view(raw, false)
		if err != nil || string(v.text(-1, false)) != decoded(raw) {
			t.Fatalf("%s: %q, want %q (%v)", lit, v.text(-1, false), decoded(raw), err)
		}
		// In place, over the result's own bytes.
		own := append([]byte(nil), raw...)
		v, _ = view(own, false)
		if got := v.text(-1, true); string(got) != decoded(raw) {
			t.Fatalf("%s in place: %q", lit, got)
		}
	}
}

func decoded(raw []byte) string {
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Content[0].Text
}

func TestViewReadsWhatTheModelSees(t *testing.T) {
	for _, tc := range []struct {
		raw, payload, visible string
		divertable, isError   bool
		bad                   bool
	}{
		{raw: `{"content":[{"type":"text","text":"a"},{"type":"resource","resource":{"uri":"x","text":"b"}},{"type":"text"}]}`, payload: "a\nb\n", visible: "a\nb\n", divertable: true},
		{raw: `{"content":[],"structuredContent":{"k":1}}`, payload: `{"k":1}`, visible: `{"k":1}`, divertable: true},
		{raw: `{"content":[{"type":"text","text":"t"}],"structuredContent":{"k":1}}`, payload: "t", visible: "t\n{\"k\":1}", divertable: true},
		{raw: `{"content":[{"type":"text","text":"t"},{"type":"image","data":"x"}]}`},
		{raw: `{"content":[{"type":"text","text":"t"}],"isError":true}`, payload: "t", visible: "t", divertable: true, isError: true},
		{raw: `{"content":{}}`, bad: true},
		{raw: `{"content":[{"type":"text","text":1}]}`, bad: true},
		{raw: `{"isError":"yes"}`, bad: true},
		{raw: `[1]`, bad: true},
		{raw: `{"content":[`, bad: true},
	} {
		v, err := view(json.RawMessage(tc.raw), false)
		if (err != nil) != tc.bad {
			t.Fatalf("%s: err %v", tc.raw, err)
		}
		if tc.bad {
			continue
		}
		payload := v.structured
		if v.textOnly() {
			payload = v.text(-1, false)
		}
		visible := string(payload)
		if v.textOnly() && v.structured != nil {
			visible += "\n" + string(v.structured)
		}
		if v.divertable != tc.divertable || v.isError != tc.isError || tc.divertable && (string(payload) != tc.payload || visible != tc.visible) {
			t.Fatalf("%s: %+v", tc.raw, v)
		}
		// In place: the same text, written over the result.
		if v.textOnly() && len(v.texts) > 0 {
			own := []byte(tc.raw)
			v2, _ := view(own, true)
			if got := v2.text(-1, true); string(got) != string(payload) {
				t.Fatalf("%s in place: %q", tc.raw, got)
			}
		}
	}
}

func TestSaveWritesWhatItDescribes(t *testing.T) {
	dir := t.TempDir()
	for _, data := range []string{string(testupstream.Listing(100)), testupstream.NDJSON(20), testupstream.Words(500), "# T\n\n## U\n```\nx\n```\n", `{"broken":`} {
		st, err := Save(memdir.At(dir), "s", "t/x", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(st.Path)
		if err != nil || len(b) != st.Bytes || bytes.Count(b, []byte{'\n'}) != st.Lines || st.Format != DetectFormat([]byte(data)) {
			t.Fatalf("%s: %+v, file %d bytes, err %v", st.Name, st, len(b), err)
		}
		if st.Format == FormatJSON {
			var want bytes.Buffer
			_ = json.Indent(&want, []byte(data), "", "  ")
			if string(b) != want.String()+"\n" {
				t.Fatal("stored JSON is not json.Indent's")
			}
		}
		again, err := Save(memdir.At(dir), "s", "t/x", []byte(data))
		if err != nil || !again.Reused || again.Name != st.Name {
			t.Fatalf("second save: %+v, %v", again, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func TestPointerFromSaveIsPointerFromScratch(t *testing.T) {
	dir := t.TempDir()
	for _, data := range []string{
		string(testupstream.Listing(300)),
		`{"a":{"b":{"c":[1,2,3]},"d":[{"x":1,"y":"s"}]},"e":"str\"ing","f":[[1],[2]],"g":{}}`,
		`[{"id":1,"name":"a"},{"id":2,"name":"b"}]`,
		`{"k":"v","n":1}`,
	} {
		st, err := Save(memdir.At(dir), "s", "t", []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		p := Pointer{Server: "s", Tool: "t", Stored: st, Tokens: 5, Threshold: 1}
		got := p.Text([]byte(data))
		p.Stored.lengths, p.Stored.ends = nil, nil
		if want := p.Text([]byte(data)); got != want {
			t.Fatalf("with Save's index:\n%s\nwithout:\n%s", got, want)
		}
	}
}

func TestDecideInPlaceIsDecideOnACopy(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	for _, text := range []string{string(testupstream.Listing(2000)), testupstream.NDJSON(3000), testupstream.Words(200000)} {
		raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		var outs []Outcome
		for _, owned := range []bool{false, true} {
			dir := t.TempDir()
			// As the proxy calls it (its bytes, validated by the upstream
			// client) and as a caller that keeps the result.
			out, err := Decide(Call{Server: "s", Tool: "t", Threshold: 100, Result: append([]byte(nil), raw...), Owned: owned, Valid: owned},
				&Agent{Enabled: true, Dir: dir, Counter: c}, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil || !out.Diverted {
				t.Fatalf("owned %v: %v %s", owned, err, out.Result)
			}
			stored, _ := os.ReadFile(out.Pointer.Stored.Path)
			if want := strings.TrimRight(text, "\n") + "\n"; out.Pointer.Stored.Format != FormatJSON && string(stored) != want {
				t.Fatalf("owned %v: stored text differs", owned)
			}
			outs = append(outs, out)
		}
		if outs[0].Pointer.Tokens != outs[1].Pointer.Tokens || outs[0].Pointer.Stored.Name != outs[1].Pointer.Stored.Name ||
			outs[0].Pointer.Text([]byte(text)) != outs[1].Pointer.Text([]byte(text)) {
			t.Fatalf("in place %+v, copy %+v", outs[1].Pointer, outs[0].Pointer)
		}
	}
}

func TestTextPrefix(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"ab\"cd\u00e9f"},{"type":"text","text":"gh"}]}`)
	v, _ := view(raw, false)
	for limit, want := range map[int]string{0: "", 3: `ab"`, 6: "ab\"cd\xc3", 8: "ab\"cd\u00e9f", 9: "ab\"cd\u00e9f\n", 100: "ab\"cd\u00e9f\ngh"} {
		got := string(v.text(limit, false))
		if limit == 6 {
			want = "ab\"cd\uFFFD"
		}
		if got != want {
			t.Fatalf("limit %d: %q, want %q", limit, got, want)
		}
	}
}

// A big result with fewer than a quarter as many bytes as the threshold
// has tokens passes unread; at a quarter or more, or small, it is read,
// and what is wrong with it is said.
func TestDecideSkipsResultsTooShortToReach(t *testing.T) {
	bad := `{"content":"` + strings.Repeat("a", unreadFrom) + `"}` // not an array
	a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: tokens.ForModel("openai", "gpt-4o")}
	for _, c := range []struct {
		threshold int
		result    string
		wantErr   bool
	}{
		{4*len(bad) + 1, bad, false},                                 // cannot reach: not read
		{4 * len(bad), bad, true},                                    // could: read, and refused
		{1 << 30, `{"content":"not an array"}`, true},                // small: read
		{1 << 30, `"` + strings.Repeat("a", unreadFrom) + `"`, true}, // not an object: read
		{1 << 30, " \n{\"content\":1,\"x\":\"" + strings.Repeat("a", unreadFrom) + "\"}", false},
	} {
		out, err := Decide(Call{Server: "s", Tool: "t", Threshold: c.threshold, Result: []byte(c.result)}, a, Options{})
		if (err != nil) != c.wantErr {
			t.Errorf("threshold %d, %.40s: err %v, want error %v", c.threshold, c.result, err, c.wantErr)
		}
		if err == nil && (out.Diverted || string(out.Result) != c.result) {
			t.Errorf("threshold %d: diverted %v, want the result passed on", c.threshold, out.Diverted)
		}
	}
}
