package redact

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Report is what one scan found. Counts are exact however many secrets
// there are; Findings keeps the first [Options].MaxFindings of them and
// More counts the rest.
type Report struct {
	// Counts is the number of secrets by kind; nil when none was found.
	Counts map[string]int
	// Total is the sum of Counts.
	Total int
	// Findings are the secrets found, in text order: their kind, their
	// place in the scanned bytes (src's offsets) and their fingerprint.
	Findings []Finding
	More     int // findings beyond Findings
	// Skipped is the bytes left unscanned in JSON: "blob" values, the
	// base64 of binary content (see [Redactor.JSON]).
	Skipped int
	// Binary, when not "", says the input looked like binary content
	// ("binary: 3 NUL bytes", or invalid UTF-8 above 1 byte in 1,000). It
	// was scanned all the same: a credential beside a NUL byte is still a
	// credential, and refusing such input would refuse results for bytes
	// that cannot hide one.
	Binary string
}

// Finding is one secret found: its kind, its bytes src[Start:End] (whole
// escapes in JSON) and the fingerprint its mask carries.
type Finding struct {
	Kind        string
	Start, End  int
	Fingerprint string
}

// Kinds returns the kinds found, sorted.
func (r Report) Kinds() []string { return slices.Sorted(maps.Keys(r.Counts)) }

// CountsText is counts by kind as the answers say them, sorted by kind:
// "github-pat ×2, jwt ×1".
func CountsText(counts map[string]int) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(counts)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s ×%d", k, counts[k])
	}
	return b.String()
}

// ErrUnscannable means the input was not scanned: the caller must not
// treat it as clean. In [Mask] mode refuse it (with the error's reason);
// in [Flag] mode keep it and say it was not scanned. The input is
// returned unchanged with it.
var ErrUnscannable = errors.New("not scanned for secrets")

// UnscannableError says why an input was not scanned; it matches
// [ErrUnscannable].
type UnscannableError struct {
	Reason string // "over the 512 MiB scan bound"
}

func (e *UnscannableError) Error() string { return ErrUnscannable.Error() + ": " + e.Reason }

// Is makes errors.Is(err, ErrUnscannable) true.
func (e *UnscannableError) Is(target error) bool { return target == ErrUnscannable }

// Located is a finding's line in the scanned text: 1-based, and the
// line's bytes (without its newline).
type Located struct {
	Kind string
	Line int
	Text []byte
}

// Locate returns the lines of rep's first max findings in text, the
// bytes rep was scanned from, in one pass.
func Locate(text []byte, rep Report, max int) []Located {
	out := make([]Located, 0, min(max, len(rep.Findings)))
	line, from := 1, 0
	for _, f := range rep.Findings {
		if len(out) == max || f.Start > len(text) {
			break
		}
		line += bytes.Count(text[from:f.Start], newline)
		from = f.Start
		start := bytes.LastIndexByte(text[:f.Start], '\n') + 1
		end := bytes.IndexByte(text[f.Start:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += f.Start
		}
		out = append(out, Located{Kind: f.Kind, Line: line, Text: text[start:end]})
	}
	return out
}

var newline = []byte("\n")

// Places names where rep's findings are in text, the bytes rep was
// scanned from: "github-pat on line 3; jwt on line 40; 2 more", the first
// max of them, each line named by at ("on line 3", or a line of another
// numbering the caller reads from the line's text).
func Places(text []byte, rep Report, max int, at func(Located) string) string {
	var parts []string
	for _, l := range Locate(text, rep, max) {
		parts = append(parts, l.Kind+" "+at(l))
	}
	if more := rep.Total - len(parts); more > 0 {
		parts = append(parts, strconv.Itoa(more)+" more")
	}
	return strings.Join(parts, "; ")
}
