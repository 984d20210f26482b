package divert

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// readBack saves data and reads it back through the stored file, failing
// the test if what is read differs from data. It returns whether it could.
func readBack(t testing.TB, dir string, data []byte) (jsonLayout, bool) {
	t.Helper()
	st, err := Save(memdir.At(dir), "s", "t", data)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := st.open()
	if !ok {
		return st.src.jsonLayout, false
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data) {
		t.Fatalf("read back %q\nsaved     %q", trunc(got), trunc(data))
	}
	return st.src.jsonLayout, true
}

func trunc(b []byte) []byte { return b[:min(len(b), 300)] }

// layouts is a listing of n items laid out compact, indented by two
// spaces and by four.
func layouts(t testing.TB, n int) (compact, indented, four []byte) {
	var v any
	if err := json.Unmarshal(testupstream.Listing(n), &v); err != nil {
		t.Fatal(err)
	}
	compact, _ = json.Marshal(v)
	indented, _ = json.MarshalIndent(v, "", "  ")
	four, _ = json.MarshalIndent(v, "", "    ")
	return compact, indented, four
}

// TestSavedReadsBack: what was saved can be read back from the file, exactly,
// for text and for JSON written compact, indented as stored, or with
// Python's default separators; other JSON layouts are said not to be.
func TestSavedReadsBack(t *testing.T) {
	compact, indented, four := layouts(t, 30)
	for _, tt := range []struct {
		name string
		data string
		lay  jsonLayout
		ok   bool
	}{
		{"compact", string(compact), layoutCompact, true},
		{"indented", string(indented), layoutIndented, true},
		{"indented with newline", string(indented) + "\n", layoutIndented, true},
		{"spaced", `{"a": 1, "b": [1, 2, {"c": "x, y: \"z\\"}], "d": {}, "e": []}`, layoutSpaced, true},
		{"space around", " \r\n\t\u00a0[1,2]\n\n", layoutCompact, true},
		{"empty array", "[]", layoutIndented, true},
		{"four spaces", string(four), layoutOther, false},
		{"tabs", "[\n\t1,\n\t2\n]", layoutOther, false},
		{"one comma unspaced", `{"a": 1,"b": 2}`, layoutOther, false},
		{"space before colon", `{"a" : 1}`, layoutOther, false},
		{"trailing spaces on a line", "[\n  1, \n  2\n]", layoutOther, false},
		{"text", "plain text\nno newline at the end", 0, true},
		{"text with newline", "plain text\n", 0, true},
		{"ndjson", testupstream.NDJSON(20), 0, true},
		{"markdown", "# Title\n\n| a | b |\n|---|---|\n", 0, true},
		{"not quite json", "[1, 2", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lay, ok := readBack(t, t.TempDir(), []byte(tt.data))
			if ok != tt.ok || lay != tt.lay {
				t.Fatalf("jsonLayout %d, readable %v; want %d, %v", lay, ok, tt.lay, tt.ok)
			}
		})
	}
}

// TestSavedReadsBackAfterRemoval: the count reads a file that retention
// may remove meanwhile; the open file still reads.
func TestSavedReadsBackAfterRemoval(t *testing.T) {
	st, err := Save(memdir.At(t.TempDir()), "s", "t", []byte(`{"a":[1,2,3]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := st.open()
	if !ok {
		t.Fatal("not readable")
	}
	defer r.Close()
	if err := os.Remove(st.Path); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); err != nil || string(got) != `{"a":[1,2,3]}` {
		t.Fatalf("%q, %v", got, err)
	}
}

// FuzzSavedReadsBack: whatever is saved, reading it back gives the same
// bytes or says it cannot.
func FuzzSavedReadsBack(f *testing.F) {
	for _, s := range indentCases {
		f.Add(s)
	}
	f.Add(`{"a": 1, "b": [1, 2]}`)
	f.Add("[\n  1,\n  2\n]")
	f.Add("text")
	for _, s := range []string{"]", "[1,]]]", "{,}", "[}", "{\"a\":[1,2}", "[" + strings.Repeat("[", 20000)} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		readBack(t, dir, []byte(s))
		// Stored as JSON exactly when it is JSON (the indenter runs
		// before validation ends, on whatever it is given).
		st, err := Save(memdir.At(dir), "s", "t", []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if t2 := bytes.TrimSpace([]byte(s)); (st.Format == FormatJSON) != (len(t2) > 0 && (t2[0] == '{' || t2[0] == '[') && jsonscan.Valid(t2)) {
			t.Fatalf("%q stored as %s", s, st.Format)
		}
	})
}

// TestRelayoutAnyChunks: reading back does not depend on where reads of
// the file or of the reader end (strings, escapes and separators cut
// anywhere).
func TestRelayoutAnyChunks(t *testing.T) {
	compact := `{"a":"x\"y\\","b":[1,{"c":"d, e: f"}],"g":{},"h":[]}`
	spaced := `{"a": "x\"y\\", "b": [1, {"c": "d, e: f"}], "g": {}, "h": []}`
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(compact), "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	for _, want := range []string{compact, spaced} {
		for _, size := range []int{1, 2, 3, 7, 64} {
			x := newRelayout(iotest.HalfReader(bytes.NewReader(pretty.Bytes())), want == spaced)
			x.buf = make([]byte, size)
			got, err := io.ReadAll(iotest.OneByteReader(x))
			if err != nil || string(got) != want {
				t.Fatalf("buffer %d: %q, %v; want %q", size, got, err, want)
			}
		}
	}
}
