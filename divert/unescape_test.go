package divert

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// FuzzUnescapeIsEncodingJSON: the text of a literal, into a buffer of its
// own, in place, and cut at a limit, is what encoding/json decodes.
func FuzzUnescapeIsEncodingJSON(f *testing.F) {
	for _, s := range []string{``, `plain text, long enough for words`, `a\"b\\c\/d\b\f\n\r\t12345678`, `\u00e9\ud83d\ude00\/x`,
		`\ud800x`, `\udc00\ud800\u0041`, "\xffa\xc3", `{\"k\":\"v\",\"n\":[1,2]}`, `12345678\"12345678\\12345678`} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, lit string, limit int) {
		raw := []byte(`{"content":[{"type":"text","text":"` + lit + `"}]}`)
		if !jsonscan.Valid(raw) {
			return
		}
		want := decoded(raw)
		v, err := view(raw, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(v.text(-1, false)); got != want {
			t.Fatalf("%q: %q, want %q", lit, got, want)
		}
		// A prefix: limit bytes of the text, made valid UTF-8 (a rune it
		// cuts is replaced by U+FFFD).
		if limit = max(0, limit%(len(want)+2)); limit < len(want) {
			if got := string(v.text(limit, false)); !strings.HasPrefix(want, strings.TrimRight(got, "\uFFFD")) {
				t.Fatalf("%q limit %d: %q", lit, limit, got)
			}
		}
		// Read a piece at a time (the pass-through's count), pieces of
		// every size: the same text.
		if streamable(v.texts) {
			piece := 1 + max(0, limit)%17
			if got, _ := io.ReadAll(newTextReaderPiece(v.texts, piece)); string(got) != want {
				t.Fatalf("%q in pieces of %d: %q, want %q", lit, piece, got, want)
			}
		}
		own := append([]byte(nil), raw...)
		v, _ = view(own, false)
		if got := string(v.text(-1, true)); got != want {
			t.Fatalf("%q in place: %q, want %q", lit, got, want)
		}
	})
}

// BenchmarkUnescape: the text of a 24 MB result, JSON held as text (an
// escape every few bytes) and plain words, into its own memory.
func BenchmarkUnescape(b *testing.B) {
	for _, format := range []string{"json", "text"} {
		raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": testupstream.Blob(format, 24)}}})
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			own := make([]byte, len(raw))
			for b.Loop() {
				copy(own, raw)
				v, _ := view(own, true)
				_ = v.text(-1, true)
			}
		})
	}
}

// BenchmarkTextReader: the text of a 24 MB result read a piece at a time,
// as the pass-through's charge feeds it to the counter (the counting
// itself left out).
func BenchmarkTextReader(b *testing.B) {
	for _, format := range []string{"json", "text"} {
		raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": testupstream.Blob(format, 24)}}})
		v, _ := view(raw, true)
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				_, _ = io.Copy(io.Discard, newTextReader(v.texts))
			}
		})
	}
}
