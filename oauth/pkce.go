package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
)

// newVerifier is a PKCE code verifier (RFC 7636 §4.1): 32 random bytes,
// 43 characters of base64url, the length the RFC recommends.
func newVerifier() string { return randomString(32) }

// challengeS256 is the S256 code challenge of verifier (RFC 7636 §4.2).
// "plain" is never used: OAuth 2.1 and the MCP specification want S256.
func challengeS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// randomString is n random bytes in base64url: verifiers, state, JWT ids.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather)
	return base64.RawURLEncoding.EncodeToString(b)
}
