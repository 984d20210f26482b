package toolsearch

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the .want files of testdata/signature.txtar")

// txtarFile is one file of a txtar archive (golang.org/x/tools/txtar's
// format: a comment, then "-- name --" lines each starting a file). The
// format is small enough to read here rather than add a module.
type txtarFile struct {
	name string
	data []byte
}

func parseTxtar(b []byte) (comment []byte, files []txtarFile) {
	lines := bytes.SplitAfter(b, []byte("\n"))
	cur := -1
	for _, l := range lines {
		t := bytes.TrimRight(l, "\n")
		if bytes.HasPrefix(t, []byte("-- ")) && bytes.HasSuffix(t, []byte(" --")) && len(t) > 6 {
			files = append(files, txtarFile{name: string(t[3 : len(t)-3])})
			cur = len(files) - 1
			continue
		}
		if cur < 0 {
			comment = append(comment, l...)
		} else {
			files[cur].data = append(files[cur].data, l...)
		}
	}
	return comment, files
}

func formatTxtar(comment []byte, files []txtarFile) []byte {
	var b bytes.Buffer
	b.Write(comment)
	for _, f := range files {
		b.WriteString("-- " + f.name + " --\n")
		b.Write(f.data)
	}
	return b.Bytes()
}

// TestSignature checks Signature against testdata/signature.txtar: real
// shapes, and the malformed and hostile ones it must survive.
func TestSignature(t *testing.T) {
	const path = "testdata/signature.txtar"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	comment, files := parseTxtar(b)
	changed := false
	for i := range files {
		name, ok := strings.CutSuffix(files[i].name, ".json")
		if !ok {
			continue
		}
		schema := bytes.TrimSuffix(files[i].data, []byte("\n"))
		got := Signature(schema) + "\n"
		if i+1 >= len(files) || files[i+1].name != name+".want" {
			t.Errorf("%s: no %s.want after it", files[i].name, name)
			continue
		}
		if want := string(files[i+1].data); strings.TrimRight(want, "\n") != strings.TrimRight(got, "\n") {
			if *update {
				files[i+1].data = []byte(got + "\n")
				changed = true
				continue
			}
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	if changed {
		if err := os.WriteFile(path, formatTxtar(comment, files), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		desc string
		max  int
		want string
	}{
		{"List issues in a GitHub repository. Filter by state.", 0, "List issues in a GitHub repository."},
		{"List issues in a GitHub repository. Filter by state.", 100, "List issues in a GitHub repository. Filter by state."},
		{"Short. This second sentence is far too long to fit in the limit given here.", 40, "Short."},
		{"Search with a query, e.g. is:open label:bug. Then more.", 0, "Search with a query, e.g. is:open label:bug."},
		{"Costs 1.5 dollars per call. More.", 0, "Costs 1.5 dollars per call."},
		{"  # Heading line\n  continues here.\n\nSecond paragraph.", 0, "Heading line continues here."},
		{"A description without any full stop that goes on for quite a while", 30, "A description without any…"},
		{"Supercalifragilisticexpialidocious", 10, "Supercali…"},
		{"Is it done? Yes.", 0, "Is it done?"},
		{"", 10, ""},
		{"Ünïcödé wörds hére ärë cut by runes not bytes", 16, "Ünïcödé wörds…"},
	}
	for _, tt := range tests {
		if got := OneLine(tt.desc, tt.max); got != tt.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tt.desc, tt.max, got, tt.want)
		}
	}
}
