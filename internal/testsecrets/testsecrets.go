// Package testsecrets makes credentials for tests: random values in each
// provider's format, written in the context they usually come in (a
// config line, a header, a URL). None is real. The redaction tests and
// the end-to-end tests plant them and check that none survives.
package testsecrets

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Character sets of the formats.
const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper2 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64    = alnum + "+/"
	hexd   = "0123456789abcdef"
	digits = "0123456789"
)

// RandString is n bytes drawn from set.
func RandString(r *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[r.IntN(len(set))]
	}
	return string(b)
}

// Planted is one secret in its context: Text is what is written, Secret
// the part that must not survive, Kind the kind expected.
type Planted struct {
	Kind, Text, Secret string
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// Plant makes one secret of kind (one of [Kinds]), in the context it is
// usually written in.
func Plant(r *rand.Rand, kind string) Planted {
	switch kind {
	case "aws-access-token":
		s := "AKIA" + RandString(r, upper2, 16)
		return Planted{kind, "aws_access_key_id = " + s, s}
	case "aws-secret-access-key":
		s := RandString(r, b64, 40)
		return Planted{kind, "aws_secret_access_key = " + s, s}
	case "github-pat":
		s := "ghp_" + RandString(r, alnum, 36)
		return Planted{kind, "GITHUB_TOKEN=" + s, s}
	case "github-oauth":
		s := "gho_" + RandString(r, alnum, 36)
		return Planted{kind, "oauth: " + s, s}
	case "github-app-token":
		s := "ghs_" + RandString(r, alnum, 36)
		return Planted{kind, "installation token " + s, s}
	case "github-fine-grained-pat":
		s := "github_pat_11" + RandString(r, alnum, 20) + "_" + RandString(r, alnum, 59)
		return Planted{kind, "token: " + s, s}
	case "slack-bot-token":
		s := "xoxb-" + RandString(r, digits, 12) + "-" + RandString(r, digits, 13) + "-" + RandString(r, alnum, 24)
		return Planted{kind, "SLACK_BOT_TOKEN=" + s, s}
	case "slack-user-token":
		s := "xoxp-" + RandString(r, digits, 12) + "-" + RandString(r, digits, 12) + "-" + RandString(r, digits, 13) + "-" + RandString(r, hexd, 32)
		return Planted{kind, "slack user " + s, s}
	case "stripe-access-token":
		s := "sk_live_" + RandString(r, alnum, 24)
		return Planted{kind, "stripe.api_key = '" + s + "'", s}
	case "jwt":
		s := b64url(`{"alg":"HS256","typ":"JWT"}`) + "." + b64url(fmt.Sprintf(`{"sub":"%d","name":"user %s","iat":1516239022}`, r.IntN(1e9), RandString(r, alnum, 6))) + "." + b64url(RandString(r, alnum, 32))
		return Planted{kind, "session=" + s + ";", s}
	case "private-key":
		var body strings.Builder
		for range 25 {
			body.WriteString(RandString(r, b64, 64) + "\n")
		}
		s := "\n" + body.String()
		return Planted{kind, "-----BEGIN RSA PRIVATE KEY-----" + s + "-----END RSA PRIVATE KEY-----", strings.TrimSpace(body.String())}
	case "url-password":
		s := RandString(r, alnum, 16)
		return Planted{kind, "DATABASE_URL=postgres://app:" + s + "@db.internal:5432/app", s}
	case "gcp-api-key":
		s := "AIza" + RandString(r, alnum+"-_", 35)
		return Planted{kind, `"apiKey": "` + s + `"`, s}
	case "openai-api-key":
		s := "sk-proj-" + RandString(r, alnum, 74) + "T3BlbkFJ" + RandString(r, alnum, 74)
		return Planted{kind, "OPENAI_API_KEY=" + s, s}
	case "anthropic-api-key":
		s := "sk-ant-api03-" + RandString(r, alnum+"-_", 93) + "AA"
		return Planted{kind, "ANTHROPIC_API_KEY=" + s, s}
	case "bearer-token":
		s := RandString(r, alnum, 40)
		return Planted{kind, "Authorization: Bearer " + s, s}
	}
	panic("no generator for " + kind)
}

// Kinds are the kinds [Plant] makes: every kind the default rules
// catch (issue 37).
var Kinds = []string{
	"aws-access-token", "aws-secret-access-key", "github-pat", "github-oauth", "github-app-token",
	"github-fine-grained-pat", "slack-bot-token", "slack-user-token", "stripe-access-token", "jwt",
	"private-key", "url-password", "gcp-api-key", "openai-api-key", "anthropic-api-key", "bearer-token",
}
