package tool

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// echoBytes bounds how much of an argument's name a problem repeats: a
// 200 KB name is the model's mistake, not something to read back.
const echoBytes = 40

// Undeclared is the problem of arguments no schema property declares:
// their names (each cut to a short prefix, at most ten of them) and the
// names the tool takes (sorted).
func Undeclared(names []string, takes []string) string {
	sort.Strings(names)
	shown := make([]string, 0, min(len(names), 10))
	for _, n := range names[:min(len(names), 10)] {
		shown = append(shown, clip(n))
	}
	list := strings.Join(shown, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(" and %d more", len(names)-len(shown))
	}
	all := "no arguments"
	if len(takes) > 0 {
		all = strings.Join(takes, ", ")
	}
	return fmt.Sprintf("unknown argument(s) %s (this tool takes: %s)", list, all)
}

// Clip is s cut to at most n bytes at a character boundary, with "…"
// when it was cut: what an answer repeats of a value the model sent,
// which may be megabytes.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// clip is a name as a problem repeats it: quoted, cut to echoBytes.
func clip(s string) string { return strconv.Quote(Clip(s, echoBytes)) }

func sortedKeys[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func article(t string) string {
	if t == "integer" || t == "array" || t == "object" {
		return "an"
	}
	return "a"
}
