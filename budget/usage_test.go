package budget

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/budget")

const fixture = "../testdata/budget/usage.jsonl"

func TestReadUsage(t *testing.T) {
	tests := []struct {
		run  string
		want []string // agent ids in file order
	}{
		{"", []string{"a1", "a2", "a4", "a5"}}, // torn, foreign and blank lines skipped
		{"run-7", []string{"a1", "a2"}},
		{"run-8", []string{"a5"}},
		{"run-none", nil},
	}
	for _, tt := range tests {
		t.Run("run="+tt.run, func(t *testing.T) {
			recs, err := ReadUsage(fixture, tt.run)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.AgentID)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := ReadUsage(filepath.Join(t.TempDir(), "absent.jsonl"), ""); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
}

func TestFormatTable(t *testing.T) {
	all, err := ReadUsage(fixture, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		records []Usage
		golden  string
	}{
		{"all", all, "table_all.golden"},
		{"one", all[:1], "table_one.golden"},
		{"none", nil, "table_none.golden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := FormatTable(&b, tt.records); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("..", "testdata", "budget", tt.golden)
			if *update {
				if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
			}
		})
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1204566: "1,204,566", -12345: "-12,345"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}
