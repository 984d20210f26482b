package redact

import (
	"bytes"
	"regexp"
)

// ruleSpec is one row of the rule table: a kind of secret, the literals
// (keywords) that every occurrence contains, and the regexp run on the
// text around a keyword hit.
//
// The provider rules are ported from gitleaks v8.30.1
// (config/gitleaks.toml, MIT, github.com/gitleaks/gitleaks): each row
// names the gitleaks rule id it follows. Two rules are this package's own
// (aws-secret-access-key, url-password, bearer-token): gitleaks has no
// rule for them outside its generic one. Differences from gitleaks, all
// because this package scans decoded JSON string text, not raw files:
// gitleaks' `\\[nr]` terminators (an escaped newline in a raw file) are
// dropped, unbounded repeats are bounded (a keyword's window must hold the
// whole match), and keywords are case-sensitive literals (gitleaks
// lowercases the text first: a cost on every byte) listed in each case
// the format allows.
type ruleSpec struct {
	ID string // the kind in a mask; gitleaks' id where it is gitleaks' rule
	// Regex is RE2 syntax, run on the decoded text of a window. Group, when
	// not 0, is the capture group that is the secret (what is masked and
	// fingerprinted); 0 masks the whole match.
	Regex string
	Group int
	// Keywords: every match contains one of them, case as written.
	Keywords []string
	// Back and Fwd bound the distance from a keyword's start to the start
	// and to the end of its match, in decoded bytes: the window run through
	// Regex. Escapes make raw text longer, so the raw window is twice that.
	// Fwd is what a match usually needs: one that reaches the window's end
	// is looked for again in a window 4 times as long (up to [maxGrow]).
	Back, Fwd int
	// Entropy is the least Shannon entropy (bits per byte) of the secret;
	// 0: any. It is gitleaks' figure where the rule is gitleaks'.
	Entropy float64
	// Allow are regexps on the secret that keep it (placeholders, the
	// documentation's example keys).
	Allow []string
	// Pre, when set, is a cheap test of the raw text around a keyword
	// found at kw, before any regexp is run (for a frequent keyword).
	Pre func(src []byte, kw int) bool
	// Match, when set, replaces Regex for finding the match at the start
	// of a window (lead bytes may come first), in FindSubmatchIndex's
	// layout; Regex is then what FindAll falls back on.
	Match func(text []byte, lead int) []int
	// Generic rules are entropy-based and off by default ([Options].Entropy).
	Generic bool
}

// term ends a secret: gitleaks' end-of-secret class plus closing
// brackets, and a backslash: decoded once, JSON inside a JSON string
// still has its own escapes (\" and \n after a secret).
const term = `(?:[\x60'"\s;,)\]}<>\\]|$)`

var defaultRules = []ruleSpec{
	// aws-access-token
	{ID: "aws-access-token", Regex: `\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`, Group: 1,
		Keywords: []string{"A3T", "AKIA", "ASIA", "ABIA", "ACCA"}, Back: 0, Fwd: 24, Entropy: 3, Allow: []string{`EXAMPLE$`}},
	// Own rule: the 40-character secret next to a name saying it is one.
	{ID: "aws-secret-access-key", Regex: `(?i)(?:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key|aws_?secret)["']?\s{0,5}(?:=|:|=>)\s{0,5}["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`, Group: 1,
		Keywords: []string{"ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey", "aws_secret", "AWS_SECRET", "awsSecret"}, Back: 12, Fwd: 80, Entropy: 3},
	// github-pat, github-oauth, github-app-token, github-refresh-token,
	// github-fine-grained-pat
	{ID: "github-pat", Regex: `ghp_[0-9a-zA-Z]{36}`, Keywords: []string{"ghp_"}, Fwd: 40, Entropy: 3},
	{ID: "github-oauth", Regex: `gho_[0-9a-zA-Z]{36}`, Keywords: []string{"gho_"}, Fwd: 40, Entropy: 3},
	{ID: "github-app-token", Regex: `(?:ghu|ghs)_[0-9a-zA-Z]{36}`, Keywords: []string{"ghu_", "ghs_"}, Fwd: 40, Entropy: 3},
	{ID: "github-refresh-token", Regex: `ghr_[0-9a-zA-Z]{36}`, Keywords: []string{"ghr_"}, Fwd: 40, Entropy: 3},
	{ID: "github-fine-grained-pat", Regex: `github_pat_\w{82}`, Keywords: []string{"github_pat_"}, Fwd: 93, Entropy: 3},
	// gitlab-pat
	{ID: "gitlab-pat", Regex: `glpat-[\w-]{20}`, Keywords: []string{"glpat-"}, Fwd: 26, Entropy: 3},
	// slack-bot-token, slack-legacy-bot-token, slack-user-token,
	// slack-legacy-workspace-token, slack-legacy-token, slack-app-token,
	// slack-config-access-token, slack-config-refresh-token,
	// slack-webhook-url
	{ID: "slack-bot-token", Regex: `xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]{0,64}`, Keywords: []string{"xoxb-"}, Fwd: 96, Entropy: 3},
	{ID: "slack-legacy-bot-token", Regex: `xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}`, Keywords: []string{"xoxb-"}, Fwd: 48, Entropy: 2},
	{ID: "slack-user-token", Regex: `xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`, Keywords: []string{"xoxp-", "xoxe-"}, Fwd: 80, Entropy: 2},
	{ID: "slack-legacy-workspace-token", Regex: `xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}`, Keywords: []string{"xoxa-", "xoxr-"}, Fwd: 56, Entropy: 2},
	{ID: "slack-legacy-token", Regex: `xox[os]-\d{1,20}-\d{1,20}-\d{1,20}-[a-fA-F\d]{1,64}`, Keywords: []string{"xoxo-", "xoxs-"}, Fwd: 150, Entropy: 2},
	{ID: "slack-app-token", Regex: `(?i)xapp-\d-[A-Z0-9]{1,32}-\d{1,20}-[a-z0-9]{1,128}`, Keywords: []string{"xapp-"}, Fwd: 200, Entropy: 2},
	{ID: "slack-config-access-token", Regex: `(?i)xoxe.xox[bp]-\d-[A-Z0-9]{163,166}`, Keywords: []string{"xoxe.xox"}, Fwd: 182, Entropy: 2},
	{ID: "slack-config-refresh-token", Regex: `(?i)xoxe-\d-[A-Z0-9]{146}`, Keywords: []string{"xoxe-"}, Fwd: 160, Entropy: 2},
	{ID: "slack-webhook-url", Regex: `(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`, Keywords: []string{"hooks.slack.com"}, Back: 8, Fwd: 90},
	// stripe-access-token
	{ID: "stripe-access-token", Regex: `\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})` + term, Group: 1,
		Keywords: []string{"k_live_", "k_test_", "k_prod_"}, Back: 1, Fwd: 110, Entropy: 2},
	// jwt
	{ID: "jwt", Regex: `\b(ey[a-zA-Z0-9_-]{17,}\.ey[a-zA-Z0-9_/-]{17,}\.(?:[a-zA-Z0-9_/-]{10,}={0,2})?)` + term, Group: 1,
		Keywords: []string{"eyJ"}, Fwd: 4096, Entropy: 3},
	// private-key: the body between the BEGIN and END lines.
	{ID: "private-key", Regex: `(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----([\s\S-]{64,}?)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`, Group: 1,
		Keywords: []string{"-----BEGIN"}, Fwd: 8192, Match: matchPrivateKey},
	// gcp-api-key
	{ID: "gcp-api-key", Regex: `\b(AIza[\w-]{35})` + term, Group: 1, Keywords: []string{"AIza"}, Fwd: 40, Entropy: 4,
		Allow: []string{`^AIzaSyabcdefghijklmnopqrstuvwxyz1234567$`}},
	// openai-api-key
	{ID: "openai-api-key", Regex: `\b(sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})` + term, Group: 1,
		Keywords: []string{"T3BlbkFJ"}, Back: 90, Fwd: 90, Entropy: 3},
	// anthropic-api-key, anthropic-admin-api-key
	{ID: "anthropic-api-key", Regex: `\b(sk-ant-api03-[a-zA-Z0-9_\-]{93}AA)` + term, Group: 1, Keywords: []string{"sk-ant-api03"}, Fwd: 110},
	{ID: "anthropic-admin-api-key", Regex: `\b(sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA)` + term, Group: 1, Keywords: []string{"sk-ant-admin01"}, Fwd: 112},
	// npm-access-token, huggingface-access-token
	{ID: "npm-access-token", Regex: `(?i)\b(npm_[a-z0-9]{36})` + term, Group: 1, Keywords: []string{"npm_"}, Fwd: 41, Entropy: 2},
	{ID: "huggingface-access-token", Regex: `\b(hf_(?i:[a-z]{34}))` + term, Group: 1, Keywords: []string{"hf_"}, Fwd: 38, Entropy: 2},
	// Own rule: the password of scheme://user:password@host. Keyed on the
	// @ (rarer than ://), then only where :// is near.
	{ID: "url-password", Regex: `\b[a-zA-Z][a-zA-Z0-9+.-]{1,30}://[^\s:@/"'<>\[\]]{1,128}:([^\s@/"'<>]{1,256})@[a-zA-Z0-9.\-\[\]]`, Group: 1,
		Keywords: []string{"@"}, Pre: urlCredentialAt, Back: 420, Fwd: 2,
		Allow: []string{`^(?:\*+|x+|X+|\.+|<[^>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{[^}]*\}\}|%[A-Za-z0-9_]+%|password|PASSWORD|pass|secret|changeme)$`}},
	// Own rule: an HTTP bearer credential (Authorization: Bearer …).
	// "bearer" in lower case is looked for only after "authorization:"
	// (as a keyword its letters are too common to be cheap).
	{ID: "bearer-token", Regex: `(?i)\bbearer[ \t]{1,4}([A-Za-z0-9\-._~+/]{16,}=*)`, Group: 1,
		Keywords: []string{"Bearer", "BEARER", "uthorization: bearer", "uthorization:bearer"}, Back: 20, Fwd: 2048, Entropy: 3},

	// generic-api-key (opt-in), simplified: a name that says secret, an
	// assignment, and a value of high entropy.
	{ID: "generic-api-key", Regex: `(?i)(?:access|auth|api|credential|creds|key|passw(?:or)?d|secret|token)[\w.-]{0,20}["']{0,3}[ \t]{0,5}(?:=|:|=>|:=)[ \t]{0,5}["'\x60]{0,3}([\w.=+/-]{10,150})` + term, Group: 1,
		Keywords: []string{"access", "Access", "ACCESS", "auth", "Auth", "AUTH", "api", "Api", "API", "credential", "Credential", "CREDENTIAL", "creds", "key", "Key", "KEY", "passw", "Passw", "PASSW", "secret", "Secret", "SECRET", "token", "Token", "TOKEN"},
		Back:     0, Fwd: 220, Entropy: 3.5, Generic: true, Allow: []string{`^[a-zA-Z_.-]+$`, `^[0-9]+$`}},
}

// Kinds returns the ids of the default rules, in table order; generic
// says whether to include the opt-in entropy-based ones.
func Kinds(generic bool) []string {
	var out []string
	for _, r := range defaultRules {
		if !r.Generic || generic {
			out = append(out, r.ID)
		}
	}
	return out
}

// urlCredentialAt is url-password's test of an @ at kw: what precedes it
// is scheme://user:password (raw, so the slashes may be \/\/): walking
// back over what a password and a user may hold, the walk must end on
// // with a : on the way. An e-mail address, an image digest
// (registry/app@sha256:…) or a mention (@name) stop elsewhere, so the
// regexp is not run for them.
func urlCredentialAt(src []byte, kw int) bool {
	colon := false
	for i := kw - 1; i >= 0 && kw-i <= 420; i-- {
		switch c := src[i]; c {
		case ':':
			colon = true
		case '/':
			if !colon {
				return false
			}
			if i >= 1 && src[i-1] == '/' {
				return true
			}
			return i >= 3 && src[i-1] == '\\' && src[i-2] == '/' && src[i-3] == '\\'
		case ' ', '\t', '\n', '\r', '@', '"', '\'', '<', '>':
			return false
		}
	}
	return false
}

var (
	pemBegin = regexp.MustCompile(`^(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
	pemEnd   = regexp.MustCompile(`^(?i)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----`)
)

// matchPrivateKey is private-key's regexp done in three steps, the body
// found with bytes.Index rather than by the regexp engine (a key is
// kilobytes long; the regexp's lazy repeat costs ten times as much).
func matchPrivateKey(text []byte, lead int) []int {
	for i := 0; i <= lead && i < len(text); i++ {
		if text[i] != '-' {
			continue
		}
		h := pemBegin.FindIndex(text[i:])
		if h == nil {
			continue
		}
		body := i + h[1]
		for from := body + 64; from <= len(text); {
			e := bytes.Index(text[from:], []byte("-----END"))
			if e < 0 {
				return nil
			}
			e += from
			if t := pemEnd.FindIndex(text[e:]); t != nil {
				return []int{i, e + t[1], body, e}
			}
			from = e + 1
		}
		return nil
	}
	return nil
}
