package artifacts

import (
	"fmt"
	"strings"
	"unicode"
)

// Prefix starts every artifact name written by [Store.Write], so that a
// worker can tell who wrote a file and a coordinator cannot overwrite the
// orchestrator's own files in the directory.
const Prefix = "coordinator-"

// DefaultExt is given to a name without an allowed extension.
const DefaultExt = "txt"

// allowedExt are the extensions kept as given: text formats the
// exploration tools understand. Anything else (".pdf", ".exe", ".sh")
// keeps its name and gets ".txt" appended, so nothing stored here looks
// executable or binary.
var allowedExt = map[string]bool{
	"txt": true, "md": true, "markdown": true, "json": true, "jsonl": true, "ndjson": true,
	"csv": true, "tsv": true, "yaml": true, "yml": true, "toml": true, "log": true,
	"xml": true, "html": true,
}

// maxBaseBytes bounds the base name; file systems allow 255 bytes in all.
const maxBaseBytes = 120

// StoredName returns the name [Store.Write] stores filename under:
// "coordinator-{base}.{ext}". Only the last path element counts
// ("../../x.md" → "coordinator-x.md"); characters other than letters,
// digits, '.', '_' and '-' become '-'; an extension outside the allow-list
// (txt md markdown json jsonl ndjson csv tsv yaml yml toml log xml html,
// any case) is kept as part of the base and ".txt" is appended
// ("notes.pdf" → "coordinator-notes.pdf.txt"), so two names never collapse
// into one. A name already carrying the prefix keeps it once, so
// StoredName is idempotent.
func StoredName(filename string) (string, error) {
	name := strings.ReplaceAll(filename, `\`, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = sanitize(name)
	name = strings.TrimLeft(strings.TrimPrefix(name, Prefix), ".-")
	base, ext := name, DefaultExt
	if i := strings.LastIndexByte(name, '.'); i > 0 && allowedExt[strings.ToLower(name[i+1:])] {
		base, ext = name[:i], strings.ToLower(name[i+1:])
	}
	base = strings.TrimRight(base, ".-")
	if len(base) > maxBaseBytes {
		base = truncate(base, maxBaseBytes)
	}
	if base == "" {
		return "", fmt.Errorf("artifacts: %q: %w", filename, ErrInvalidName)
	}
	return Prefix + base + "." + ext, nil
}

// sanitize maps disallowed characters to '-', collapses runs of '-', and
// trims leading dots and dashes (no hidden files, no flag-like names).
func sanitize(s string) string {
	var b strings.Builder
	lastDash := false
	for _, r := range s {
		ok := r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)
		if !ok || r == '-' {
			if !lastDash {
				b.WriteByte('-')
			}
			lastDash = true
			continue
		}
		b.WriteRune(r)
		lastDash = false
	}
	return strings.TrimLeft(strings.TrimRight(b.String(), "-"), ".-")
}

// truncate cuts s, longer than n bytes, to at most n bytes on a rune
// boundary.
func truncate(s string, n int) string {
	cut := 0
	for i := range s {
		if i > n {
			break
		}
		cut = i
	}
	return strings.TrimRight(s[:cut], ".-")
}
