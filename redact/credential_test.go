package redact

import "testing"

// TestLooksLikeCredential is the one rule `init` applies to env values,
// headers and URL query parameters (issue 38 item 8): named credentials
// whatever their length, credentials by their value whatever their name,
// and settings that only share a word with one.
func TestLooksLikeCredential(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"DB_PASSWORD", "hunter2", true}, // short, still a password
		{"api_key", "abc123", true},
		{"apiKey", "abc123", true},
		{"x-api-key", "k-1234567", true},
		{"Authorization", "Bearer abc", true},
		{"X-Auth", "s3cr3t", true},
		{"GITHUB_TOKEN", "x", true},
		{"access_token", "a.b.c", true},
		{"sessionId", "9f8e7d", true},
		{"sig", "AbCdEf0123", true},
		{"PGPASS", "p", false},     // one word "pgpass": not cut, not a credential's name
		{"PWD", "/home/me", false}, // the working directory
		{"AUTH_ENABLED", "true", false},
		{"SESSION_TTL", "30", false},
		{"DB_PASSWORD", "", false},
		{"AUTHOR", "Ada Lovelace", false},
		{"KEYBOARD", "us", false},
		{"NODE_ENV", "production", false},
		{"region", "eu-west-1", false},
		{"NOTE", "ghp_" + "0123456789abcdefABCDEF0123456789abcd", true}, // by its value
		{"DSN", "postgres://app:Sup3rS3cret@db.example.com:5432/app", true},
	} {
		if got := LooksLikeCredential(tc.name, tc.value); got != tc.want {
			t.Errorf("LooksLikeCredential(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}
