package oauth

import (
	"net/http"
	"strings"
)

// Challenge is what a server's Bearer challenge (WWW-Authenticate, RFC
// 6750 §3, RFC 9728 §5.1) says: where its protected resource metadata is,
// which scope the request needs, and the error.
type Challenge struct {
	ResourceMetadata string // resource_metadata: the metadata's URL
	Scope            string // scope: space-separated, authoritative for this request
	Error            string // error: invalid_token, insufficient_scope, …
}

// ParseChallenge reads the Bearer challenge of h's WWW-Authenticate
// headers. ok is false when there is none. Other schemes (Basic,
// DPoP) in the same or other headers are skipped.
func ParseChallenge(h http.Header) (c Challenge, ok bool) {
	for _, line := range h.Values("WWW-Authenticate") {
		for _, ch := range splitChallenges(line) {
			if !strings.EqualFold(ch.scheme, "Bearer") {
				continue
			}
			return Challenge{
				ResourceMetadata: ch.params["resource_metadata"],
				Scope:            ch.params["scope"],
				Error:            ch.params["error"],
			}, true
		}
	}
	return Challenge{}, false
}

type challenge struct {
	scheme string
	params map[string]string
}

// splitChallenges parses one WWW-Authenticate value (RFC 9110 §11.6.1):
// challenges separated by commas, each a scheme followed by auth-params
// (name=token or name="quoted string"), which are comma-separated too. So
// the value is cut at the commas outside quotes, and an item with a space
// before any '=' starts a challenge. A token68 is skipped; parameter
// names are case-insensitive, so they are lowered.
func splitChallenges(s string) []challenge {
	var out []challenge
	for _, item := range splitOutsideQuotes(s) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		eq := strings.IndexByte(item, '=')
		if sp := strings.IndexAny(item, " \t"); sp >= 0 && (eq < 0 || sp < eq) || eq < 0 {
			scheme, rest, _ := strings.Cut(item, " ")
			out = append(out, challenge{scheme: scheme, params: map[string]string{}})
			item = strings.TrimSpace(rest)
			eq = strings.IndexByte(item, '=')
			if eq <= 0 || strings.Trim(item[eq:], "=") == "" {
				continue // no parameter, or a token68
			}
		}
		if len(out) == 0 || eq <= 0 {
			continue
		}
		name := strings.ToLower(strings.TrimSpace(item[:eq]))
		out[len(out)-1].params[name] = unquote(strings.TrimSpace(item[eq+1:]))
	}
	return out
}

// splitOutsideQuotes cuts s at the commas that are not inside a quoted
// string.
func splitOutsideQuotes(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unquote is a token as is, or a quoted string without its quotes and
// backslash escapes.
func unquote(v string) string {
	if len(v) < 2 || v[0] != '"' {
		return v
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			if i+1 < len(v) {
				i++
				b.WriteByte(v[i])
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(v[i])
		}
	}
	return b.String()
}
