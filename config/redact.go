package config

import (
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Masked stands for a secret in a URL shown to a person or a model.
const Masked = "xxxxx"

// RedactURL is raw with what may be a secret masked, for errors (the
// model reads them), logs, doctor and auth status: the userinfo's
// password, the value of every query parameter (api_key=…, token=…), and
// every path segment or user name that [SecretSegment] says may be a
// secret become [Masked]; the fragment is dropped. The scheme, host,
// parameter names and ordinary path segments stay, so the URL is still
// recognisable: https://mcp.example.com/mcp/xxxxx/sse. A URL that does
// not parse is not shown at all.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparseable URL)"
	}
	if u.User != nil {
		name := u.User.Username()
		if SecretSegment(name) {
			name = Masked
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(name, Masked)
		} else {
			u.User = url.User(name)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = Masked
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	if u.Opaque != "" {
		u.Opaque = Masked
	}
	if u.Path != "" {
		segs := strings.Split(u.EscapedPath(), "/")
		masked := false
		for i, s := range segs {
			dec, err := url.PathUnescape(s)
			if err != nil || SecretSegment(dec) {
				segs[i], masked = Masked, true
			}
		}
		if masked {
			raw := strings.Join(segs, "/")
			u.Path, _ = url.PathUnescape(raw)
			u.RawPath = raw
		}
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// RedactURLIn is text with the secrets of the URL raw — those
// [RedactURL] masks: the password, query values of 8 bytes or more,
// secret path segments and user names — replaced by [Masked], escaped
// or not: for what a server answers about its own URL (an error page
// quoting the path it was asked for).
func RedactURLIn(text, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return text
	}
	var secrets []string
	add := func(s string) {
		if s != "" {
			secrets = append(secrets, s)
			if esc := url.PathEscape(s); esc != s {
				secrets = append(secrets, esc)
			}
		}
	}
	if u.User != nil {
		if SecretSegment(u.User.Username()) {
			add(u.User.Username())
		}
		if pw, ok := u.User.Password(); ok {
			add(pw)
		}
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			if len(v) >= 8 {
				add(v)
			}
		}
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if SecretSegment(seg) {
			add(seg)
		}
	}
	// Longest first: a secret containing another is masked whole.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, s := range secrets {
		text = strings.ReplaceAll(text, s, Masked)
	}
	return text
}

// RedactURLError masks the URL an *url.Error (what an HTTP client's Do
// returns) carries, with [RedactURL], and returns err.
func RedactURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		ue.URL = RedactURL(ue.URL)
	}
	return err
}

// The limits of [SecretSegment].
const (
	maxKeptSegment = 64 // bytes of a whole segment
	maxKeptWord    = 20 // letters of a part made of letters only
	maxKeptDigits  = 8  // digits of a part made of digits only
	maxKeptMixed   = 6  // characters of a part mixing letters and digits
)

// version is a version part: v1, v2, v1beta1, v2alpha, v3rc2.
var version = regexp.MustCompile(`^[vV][0-9]{1,3}((alpha|beta|rc|preview)[0-9]{0,3})?$`)

// SecretSegment reports whether one (unescaped) path segment, or a URL's
// user name, may carry a secret and is masked when a URL is shown. The
// rule: a segment longer than 64 bytes is masked; otherwise it is cut
// into parts at every character that is not an ASCII letter, digit, +
// or = (so at - _ . ~ @ : and the like), and it is kept when every part
// is
//
//   - a version (v1, v2beta1, v3rc2),
//   - letters only, at most 20 (mcp, sse, api, servers, oauth),
//   - digits only, at most 8 (2025, 11, 25: dates, small ids), or
//   - anything else (letters and digits mixed, + or =) of at most 6
//     characters (oauth2, k8s, s3).
//
// Anything else is masked: PATHSECRET123, ghp_… tokens, hex and base64
// strings, UUIDs (their 8- and 12-character parts mix letters and
// digits), long numbers. What the rule cannot tell from a word is a
// secret of 20 letters or fewer with no digit: put secrets in headers
// ([mcp.servers.NAME] headers) or the query, both always masked.
func SecretSegment(seg string) bool {
	if len(seg) > maxKeptSegment {
		return true
	}
	parts := strings.FieldsFunc(seg, func(r rune) bool { return !isASCIILetter(r) && !isASCIIDigit(r) && !isBase64Mark(r) })
	for _, p := range parts {
		if !keptPart(p) {
			return true
		}
	}
	return false
}

func keptPart(p string) bool {
	letters, digits, marks := 0, 0, 0
	for _, r := range p {
		switch {
		case isASCIILetter(r):
			letters++
		case isASCIIDigit(r):
			digits++
		default:
			marks++
		}
	}
	switch {
	case version.MatchString(p):
		return true
	case digits == 0 && marks == 0:
		return letters <= maxKeptWord
	case letters == 0 && marks == 0:
		return digits <= maxKeptDigits
	}
	return len(p) <= maxKeptMixed
}

func isASCIILetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }
func isASCIIDigit(r rune) bool  { return r >= '0' && r <= '9' }

// isBase64Mark: + and = belong to a part (base64 keys have them), where
// other punctuation separates words.
func isBase64Mark(r rune) bool { return r == '+' || r == '=' }
