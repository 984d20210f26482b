package toolsearch

import "strings"

// stem reduces an English word to a crude stem so that the forms a request
// and a tool description use meet: plurals (issues, repositories, branches),
// -ing, -ed, -ion, -ment and a final -e (create, created, creating, creation
// all give "creat"). It is deliberately lighter than Porter's: tool
// vocabularies are short technical words where over-stemming hurts more
// than it helps (status, analysis, kubernetes stay whole). Words under four
// letters and words with digits are left alone.
func stem(w string) string {
	if len(w) < 4 || hasDigit(w) {
		return w
	}
	if s, ok := irregular[w]; ok {
		return s
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		w = w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zes"),
		strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"):
		w = w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		// status, class, analysis: not plurals.
	case strings.HasSuffix(w, "s"):
		w = w[:len(w)-1]
	}
	switch {
	case strings.HasSuffix(w, "ing") && vowelIn(w[:len(w)-3]) && len(w) > 5:
		w = undouble(w[:len(w)-3])
	case strings.HasSuffix(w, "ed") && vowelIn(w[:len(w)-2]) && len(w) > 4:
		w = undouble(w[:len(w)-2])
	case strings.HasSuffix(w, "ation") && len(w) > 7:
		w = w[:len(w)-5] + "at"
	case strings.HasSuffix(w, "ion") && len(w) > 6 && !strings.HasSuffix(w, "sion"):
		w = w[:len(w)-3]
	case strings.HasSuffix(w, "ment") && len(w) > 7:
		w = w[:len(w)-4]
	}
	if len(w) > 3 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

// irregular holds the forms the suffix rules get wrong or cannot join.
var irregular = map[string]string{
	"subscription": "subscrib", "subscriptions": "subscrib", "subscribe": "subscrib", "subscribed": "subscrib",
	"description": "describ", "descriptions": "describ", "describe": "describ", "described": "describ",
	"children": "child", "indices": "index", "indexes": "index", "data": "data", "analyses": "analysis",
	"running": "run", "ran": "run", "wrote": "writ", "written": "writ", "writing": "writ",
	"sent": "send", "sending": "send", "paid": "pay", "bought": "buy", "found": "find",
	"kubernetes": "kubernetes", "series": "series", "access": "access", "address": "address",
	"queries": "query", "aliases": "alias", "statuses": "status",
}

func hasDigit(w string) bool {
	for i := 0; i < len(w); i++ {
		if '0' <= w[i] && w[i] <= '9' {
			return true
		}
	}
	return false
}

func isVowel(c byte) bool {
	return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y'
}

func vowelIn(s string) bool {
	for i := 0; i < len(s); i++ {
		if isVowel(s[i]) {
			return true
		}
	}
	return false
}

// undouble turns "logg" (from logging) and "stopp" into "log" and "stop";
// -ll, -ss and -zz stay (install, access, buzz).
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) {
		switch w[n-1] {
		case 'l', 's', 'z':
		default:
			return w[:n-1]
		}
	}
	return w
}
