package redisurl

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		url, redacted, err string
	}{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0", ""},
		{"rediss://:s3cret@cache.example:6380/2", "rediss://:xxxxx@cache.example:6380/2", ""},
		{"", "", "empty"},
		{"http://:s3cret@h/0", "http://:xxxxx@h/0", "want a redis:// or rediss:// URL"},
		{"redis://:s3cret@/0", "redis://:xxxxx@/0", "no host"},
		{"redis://h:99999/0", "redis://h:99999/0", "invalid port"},
		{"redis://:s3cret@h/db", "redis://:xxxxx@h/db", "database number"},
		{"redis://:s3cret@h:6379/0?dial_timeout=x", "redis://:xxxxx@h:6379/0?dial_timeout=x", "dial_timeout"},
	} {
		redacted, err := Check(tt.url)
		if redacted != tt.redacted || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Check(%q) = %q, %v; want %q, %q", tt.url, redacted, err, tt.redacted, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Check(%q): the error shows the password: %v", tt.url, err)
		}
	}
}
