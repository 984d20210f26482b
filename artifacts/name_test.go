package artifacts

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStoredName(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"x.md", "coordinator-x.md", nil},
		{"../../x.md", "coordinator-x.md", nil},
		{"/etc/passwd", "coordinator-passwd.txt", nil},
		{`C:\Users\me\Plan.MD`, "coordinator-Plan.md", nil},
		{"report", "coordinator-report.txt", nil},
		{"notes.pdf", "coordinator-notes.pdf.txt", nil},
		{"run.sh", "coordinator-run.sh.txt", nil},
		{"data.JSON", "coordinator-data.json", nil},
		{"rows.ndjson", "coordinator-rows.ndjson", nil},
		{"cfg.yml", "coordinator-cfg.yml", nil},
		{"coordinator-x.md", "coordinator-x.md", nil},
		{"My Report (final).md", "coordinator-My-Report-final.md", nil},
		{".hidden.md", "coordinator-hidden.md", nil},
		{"--flag.txt", "coordinator-flag.txt", nil},
		{"résumé.md", "coordinator-résumé.md", nil},
		{"a..b.csv", "coordinator-a..b.csv", nil},
		{"trailing.", "coordinator-trailing.txt", nil},
		{"tab\tname\x00.md", "coordinator-tab-name.md", nil},
		{"", "", ErrInvalidName},
		{"../", "", ErrInvalidName},
		{"???", "", ErrInvalidName},
		{".md", "coordinator-md.txt", nil},
		{"coordinator-.md", "coordinator-md.txt", nil},
		{"coordinator-", "coordinator-coordinator.txt", nil},
	}
	for _, tt := range tests {
		got, err := StoredName(tt.in)
		if !errors.Is(err, tt.wantErr) || got != tt.want {
			t.Errorf("StoredName(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestStoredNameTruncatesOnRuneBoundary(t *testing.T) {
	got, err := StoredName(strings.Repeat("é", 200) + ".md")
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(strings.TrimPrefix(got, Prefix), ".md")
	if len(base) > maxBaseBytes || !utf8.ValidString(got) {
		t.Fatalf("base %d bytes, valid UTF-8 %v", len(base), utf8.ValidString(got))
	}
}

func FuzzStoredName(f *testing.F) {
	for _, s := range []string{"x.md", "../../x.md", "notes.pdf", "coordinator-a", "é.JSON", "a/b\\c.yml", ".", "\xff.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := StoredName(in)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !strings.HasPrefix(got, Prefix) || strings.ContainsAny(got, "/\\\x00") || len(got) > 255 {
			t.Fatalf("StoredName(%q) = %q", in, got)
		}
		ext := got[strings.LastIndexByte(got, '.')+1:]
		if !allowedExt[ext] {
			t.Fatalf("StoredName(%q) = %q: extension %q not allowed", in, got, ext)
		}
		again, err := StoredName(got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
	})
}

func TestCheckRunID(t *testing.T) {
	for id, ok := range map[string]bool{"run-1": true, "2026-11-30T09:00": true, "": false, ".": false, "..": false,
		"../x": false, "a/b": false, `a\b`: false, "a\x00": false} {
		if err := checkRunID(id); (err == nil) != ok {
			t.Errorf("checkRunID(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}
