package memory

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		why      string // in the refusal; "" when it is taken
	}{
		{"/memories", "", ""},
		{"/memories/", "", ""},
		{"/memories//", "", ""},
		{"/memories/./", "", ""},
		{"/memories/a.md", "a.md", ""},
		{"/memories//a//b/./c.md/", "a/b/c.md", ""},
		{"/memories/über café.md", "über café.md", ""},
		{"/memories/100%.md", "100%.md", ""},
		{"/memories/50%zz", "50%zz", ""},
		{"/memories/a..b", "a..b", ""},
		{"/memories/..", "", "contains .."},
		{"/memories/a/../b", "", "contains .."},
		{"/memories/../memories/a", "", "contains .."},
		{"/memories/%2e%2e/x", "", "percent-encoded character (%2e)"},
		{"/memories/a%2Fb", "", "percent-encoded character (%2F)"},
		{"/memories/a%00", "", "percent-encoded"},
		{"/etc/passwd", "", "outside /memories"},
		{"/", "", "outside /memories"},
		{"", "", "relative"},
		{"memories/a.md", "", "relative"},
		{"/memoriesX", "", "outside /memories"},
		{"/Memories/a", "", "outside /memories"},
		{"/memories\\..\\a", "", "backslash"},
		{"/memories/a\x00b", "", "NUL"},
		{"/memories/a\tb", "", "control character"},
		{"/memories/a\u0085b", "", "control character"},
		{"/memories/a\u200bb", "", "invisible formatting character"},
		{"/memories/\xff", "", "UTF-8"},
		{"/memories/.git/config", "", "hidden"},
		{"/memories/a/.tmp", "", "hidden"},
		{"/memories/ a", "", "space"},
		{"/memories/a ", "", "space"},
		{"/memories/" + strings.Repeat("n", MaxNameBytes), strings.Repeat("n", MaxNameBytes), ""},
		{"/memories/" + strings.Repeat("n", MaxNameBytes+1), "", "longer than 128 bytes"},
		{"/memories/" + strings.Repeat("a/", MaxDepth-1) + "z", strings.Repeat("a/", MaxDepth-1) + "z", ""},
		{"/memories/" + strings.Repeat("a/", MaxDepth) + "z", "", "levels deep"},
		{"/memories/" + strings.Repeat(strings.Repeat("n", 100)+"/", 6) + "x", "", "longer than 512 bytes"},
		{"/memories/" + strings.Repeat("n", 1100), "", "longer than 1024 bytes"},
	} {
		got, err := Clean(tt.in)
		switch {
		case tt.why == "" && (err != nil || got != tt.want):
			t.Errorf("Clean(%.40q) = %q, %v; want %q", tt.in, got, err, tt.want)
		case tt.why != "" && (err == nil || !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), tt.why)):
			t.Errorf("Clean(%.40q) = %q, %v; want a refusal saying %q", tt.in, got, err, tt.why)
		}
	}
}

// FuzzClean: whatever the model sends, a path Clean takes is local to
// /memories (no "..", no absolute, no empty or "." element), clean, of
// printable valid UTF-8 without backslashes or hidden names, within the
// bounds, and stable: cleaning its display again gives it back.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"/memories", "/memories/a.md", "/memories/../x", "/memories/%2e%2e", "/memories//a/./b/",
		"/memories/a\x00", "/etc", "/memories/.h", "/memories/a\\b", "/memories/ü/😀.md", "/memories/a%", "/memories/a%2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rel, err := Clean(in)
		if err != nil {
			if !errors.Is(err, ErrBadPath) {
				t.Fatalf("Clean(%q): %v does not wrap ErrBadPath", in, err)
			}
			return
		}
		if rel == "" {
			return
		}
		switch {
		case !filepath.IsLocal(rel), path.Clean(rel) != rel, strings.HasPrefix(rel, "/"):
			t.Fatalf("Clean(%q) = %q: not local and clean", in, rel)
		case !utf8.ValidString(rel), strings.ContainsAny(rel, "\\\x00"):
			t.Fatalf("Clean(%q) = %q: bad characters", in, rel)
		case len(rel) > MaxPathBytes, strings.Count(rel, "/")+1 > MaxDepth:
			t.Fatalf("Clean(%q) = %q: past the bounds", in, rel)
		}
		for _, r := range rel {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("Clean(%q) = %q: control or formatting character %U", in, rel, r)
			}
		}
		for _, e := range strings.Split(rel, "/") {
			if e == "" || e == "." || e == ".." || strings.HasPrefix(e, ".") || len(e) > MaxNameBytes {
				t.Fatalf("Clean(%q) = %q: element %q", in, rel, e)
			}
		}
		if again, err := Clean(Display(rel)); err != nil || again != rel {
			t.Fatalf("Clean(Display(%q)) = %q, %v", rel, again, err)
		}
		if !cleanRel(rel) {
			t.Fatalf("cleanRel(%q) false", rel)
		}
	})
}

func TestText(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1: "1B", 1023: "1023B", 1024: "1.0K", 1536: "1.5K", 1537: "1.6K",
		10239: "10K", 10240: "10K", 12 << 10: "12K", 1 << 20: "1.0M", 5<<20 + 1: "5.1M", 3 << 30: "3.0G"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %s, want %s", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 65536: "65,536", 1234567: "1,234,567", -4000: "-4,000"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %s, want %s", n, got, want)
		}
	}
	for text, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2, "\n": 1, "\n\n": 2} {
		if got := len(lines(text)); got != want {
			t.Errorf("lines(%q) = %d, want %d", text, got, want)
		}
	}
}
