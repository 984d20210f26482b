package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// [pad] backend = "redis": the URL may come from the environment and hold
// a password, which no error shows.
func TestPadRedisKeys(t *testing.T) {
	const pw = "hunter2-pw"
	env := map[string]string{"SP_REDIS": "redis://worker:" + pw + "@cache.internal:6380/2", "SP_PW": pw}
	tests := []struct {
		name, src string
		wantErr   string // substring; "" means valid
		url       string // RedisURL when valid
	}{
		{"from env", `backend = "redis"` + "\nredis_url = \"{{ env.SP_REDIS }}\"", "", env["SP_REDIS"]},
		{"password from env", `backend = "redis"` + "\nredis_url = \"rediss://:{{ env.SP_PW }}@cache.internal\"", "", "rediss://:" + pw + "@cache.internal"},
		{"query options", `backend = "redis"` + "\nredis_url = \"redis://cache.internal/0?dial_timeout=3s\"", "", "redis://cache.internal/0?dial_timeout=3s"},
		{"file backend spelled out", `backend = "file"`, "", ""},
		{"bad port", `backend = "redis"` + "\nredis_url = \"redis://u:" + pw + "@cache.internal:99999/0\"", `3:1: pad.redis_url: invalid url "redis://u:xxxxx@cache.internal:99999/0": invalid port "99999"`, ""},
		{"bad db", `backend = "redis"` + "\nredis_url = \"redis://u:" + pw + "@cache.internal/zero\"", `the path must be a database number, got "zero"`, ""},
		{"no host", `backend = "redis"` + "\nredis_url = \"redis://:" + pw + "@/0\"", "no host", ""},
		{"unparsable", `backend = "redis"` + "\nredis_url = \"redis://u:" + pw + "@ca che/0\"", `pad.redis_url: invalid url: invalid character " " in host name`, ""},
		{"unknown option", `backend = "redis"` + "\nredis_url = \"redis://u:" + pw + "@cache/0?colour=red\"", `unexpected option: colour`, ""},
		{"empty", `backend = "redis"` + "\nredis_url = \"\"", "pad.redis_url: must not be empty", ""},
		{"not a string", `backend = "redis"` + "\nredis_url = 6379", "pad.redis_url: want a string, got integer", ""},
		{"empty prefix", `backend = "redis"` + "\nredis_url = \"redis://c\"\nredis_prefix = \"\"", `pad.redis_prefix: invalid prefix "": must not be empty`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("t.toml", []byte("[pad]\n"+tt.src+"\n"), testEnv(env))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if c.Pad.RedisURL != tt.url || c.Pad.RedisPrefix != DefaultRedisPrefix {
					t.Fatalf("pad = %+v", c.Pad)
				}
				if strings.Contains(c.Pad.RedactedRedisURL(), pw) {
					t.Fatalf("RedactedRedisURL() = %q", c.Pad.RedactedRedisURL())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

func TestPadRedisTTL(t *testing.T) {
	c, err := Parse("t.toml", []byte("[pad]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379/0\"\nredis_ttl = \"720h\"\n"), testEnv(nil))
	if err != nil || c.Pad.RedisTTL != 720*time.Hour {
		t.Fatalf("redis_ttl: %v, %v", c.Pad.RedisTTL, err)
	}
	_, err = Parse("t.toml", []byte("[pad]\nbackend = \"redis\"\nredis_url = \"redis://127.0.0.1:6379/0\"\nredis_ttl = \"9000h\"\n"), testEnv(nil))
	if err == nil || !strings.Contains(err.Error(), "t.toml:4:1: pad.redis_ttl: duration 9000h0m0s out of range") {
		t.Errorf("too long redis_ttl: %v", err)
	}
}
