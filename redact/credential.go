package redact

import (
	"strings"
	"sync"
	"unicode"
)

// CredentialName reports whether a name — an environment variable, an
// HTTP header, a URL query parameter — says that its value is a
// credential. The name is cut into words at every character that is not
// a letter or digit and where a lower-case letter meets an upper-case
// one (apiKey: api, key), and lower-cased. It is a credential's name
// when
//
//   - it contains token, secret, passw, credential, cookie, apikey,
//     api_key, api-key, privatekey or private_key (GITHUB_TOKEN,
//     DB_PASSWORD, x-api-key, access_token), or
//   - one of its words is auth, authorization (or starts with authoriz),
//     key, pass, session, sig or signature (X-Auth, API_KEY, sessionId).
//
// Names such as AUTHOR, KEYBOARD or PWD (the working directory) are
// not: the words must match whole.
func CredentialName(name string) bool {
	low := strings.ToLower(name)
	for _, s := range []string{"token", "secret", "passw", "credential", "cookie", "apikey", "api_key", "api-key", "privatekey", "private_key"} {
		if strings.Contains(low, s) {
			return true
		}
	}
	for _, w := range words(name) {
		switch w {
		case "auth", "key", "pass", "session", "sig", "signature":
			return true
		}
		if strings.HasPrefix(w, "authoriz") {
			return true
		}
	}
	return false
}

// words cuts a name at non-alphanumerics and at lower-to-upper case
// changes, lower-cased.
func words(name string) []string {
	var out []string
	var b strings.Builder
	prevLower := false
	flush := func() {
		if b.Len() > 0 {
			out = append(out, strings.ToLower(b.String()))
			b.Reset()
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		b.WriteRune(r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return out
}

// defaultRedactor is the default rules, made once: [Credential] is
// asked a few values at a time (a client config being imported).
var defaultRedactor = sync.OnceValue(func() *Redactor {
	r, err := New(Options{})
	if err != nil {
		panic("redact: the default rules do not compile: " + err.Error()) // a bug of this package, caught by its tests
	}
	return r
})

// Credential reports whether v, whatever it is named, holds a credential
// the default rules find ([Kinds](false): ghp_… tokens, AWS key ids,
// JWTs, Authorization: Bearer credentials, a URL's password, …). Text
// too large to scan counts as a credential: it cannot be cleared.
func Credential(v string) bool {
	_, rep, err := defaultRedactor().String(v)
	return err != nil || rep.Total > 0
}

// LooksLikeCredential is the one rule for a named value kept out of a
// file a person writes or shares (`scratchpad-mcp init` importing a
// client's config): the value is a credential when [Credential] says so,
// or when [CredentialName] says its name is a credential's and the value
// is not empty, not a boolean (true, false, yes, no, on, off) and not a
// number of at most 4 digits (AUTH_ENABLED = "true", SESSION_TTL =
// "30": settings, not secrets). Length does not clear a value:
// DB_PASSWORD = "hunter2" is a credential.
func LooksLikeCredential(name, v string) bool {
	if Credential(v) {
		return true
	}
	if !CredentialName(name) {
		return false
	}
	t := strings.TrimSpace(v)
	switch strings.ToLower(t) {
	case "", "true", "false", "yes", "no", "on", "off":
		return false
	}
	if len(t) <= 4 && strings.Trim(t, "0123456789") == "" {
		return false
	}
	return true
}
