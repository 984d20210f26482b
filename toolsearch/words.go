package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// splitWords appends to dst the lower-cased words of s: runs of letters and
// digits, cut where a name's case changes (listIssues, HTTPServer) and at
// every other character (snake_case, kebab-case, dots, "prefix__name",
// spaces). A digit stays with the letters around it (k8s, s3, oauth2), so
// abbreviations survive whole.
func splitWords(s string, dst []string) []string {
	eachWord(s, func(w string) { dst = append(dst, lower(w)) })
	return dst
}

// eachWord calls fn with each word of s as splitWords cuts them, as
// substrings of s in their own case: the index looks them up in its cache
// before lower-casing anything.
func eachWord(s string, fn func(w string)) {
	start := -1 // start of the current word, in bytes
	run := -1   // start of the current run of letters and digits
	parts := 0  // words cut from the run so far
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			fn(s[start:end])
			parts++
		}
		start = -1
	}
	// endRun ends a run; a run cut in two or three by case (GitHub,
	// PagerDuty, ConfigMap, PaymentIntent) is a word too, so "github" and
	// "configmap" find it as well as "git hub" and "config map".
	endRun := func(end int) {
		flush(end)
		if parts >= 2 && parts <= 3 {
			fn(s[run:end])
		}
		run, parts = -1, 0
	}
	for i := 0; i < len(s); {
		r, n := rune(s[i]), 1
		var letter, digit, upper bool
		if r < utf8.RuneSelf {
			digit = '0' <= r && r <= '9'
			upper = 'A' <= r && r <= 'Z'
			letter = upper || 'a' <= r && r <= 'z'
		} else {
			r, n = utf8.DecodeRuneInString(s[i:])
			digit, upper, letter = unicode.IsDigit(r), unicode.IsUpper(r), unicode.IsLetter(r)
		}
		if !letter && !digit {
			endRun(i)
			prev = 0
			i += n
			continue
		}
		if start < 0 {
			start, run = i, i
		} else if upper {
			// aB: a new word starts at B. ABc: at B, the last capital of
			// an acronym starting the next word (HTTPServer → http server).
			if unicode.IsLower(prev) || unicode.IsDigit(prev) && i-start > 1 && !isDigitsOnly(s[start:i]) {
				flush(i)
				start = i
			} else if unicode.IsUpper(prev) && i+n < len(s) {
				next, _ := utf8.DecodeRuneInString(s[i+n:])
				if unicode.IsLower(next) {
					flush(i)
					start = i
				}
			}
		}
		prev = r
		i += n
	}
	endRun(len(s))
}

func isDigitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// lower is strings.ToLower without the allocation for words already in
// lower-case ASCII, which most are.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// stopWords are dropped from documents and queries: words that say nothing
// about which tool is meant. Words that name an action or an object (all,
// new, open, my) are kept: state "all" and "my open issues" need them.
// "me" goes: "show me …" is how requests start, and would find get_me.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "for": true, "to": true, "in": true, "on": true,
	"at": true, "by": true, "with": true, "from": true, "into": true, "onto": true, "about": true,
	"and": true, "or": true, "but": true, "if": true, "then": true, "than": true, "as": true,
	"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "being": true,
	"am": true, "do": true, "does": true, "did": true, "has": true, "have": true, "had": true,
	"it": true, "its": true, "this": true, "that": true, "these": true, "those": true, "there": true,
	"i": true, "we": true, "you": true, "your": true, "our": true, "us": true, "they": true, "their": true,
	"me": true, "he": true, "she": true, "his": true, "her": true, "them": true,
	"what": true, "which": true, "who": true, "whom": true, "whose": true, "why": true, "how": true,
	"when": true, "where": true, "can": true, "could": true, "would": true, "should": true, "will": true,
	"shall": true, "may": true, "might": true, "must": true, "please": true, "some": true, "any": true,
	"so": true, "just": true, "also": true, "very": true, "too": true, "not": true, "no": true,
	"e": true, "g": true, "eg": true, "ie": true, "etc": true, "s": true, "t": true, "let": true,
	"want": true, "need": true, "like": true, "use": true, "used": true, "using": true, "via": true,
	"one": true, "more": true, "only": true, "each": true, "every": true, "such": true, "other": true,
	"optional": true, "optionally": true, "default": true, "defaults": true, "whether": true, "given": true,
}
