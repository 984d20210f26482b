package config

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// The container's config loads with SCRATCHPAD_TOKEN set and refuses to
// start without it (it serves beyond loopback, so it needs a token).
func TestDockerConfig(t *testing.T) {
	c, err := LoadWith("../docker/scratchpad.toml", testEnv(map[string]string{"SCRATCHPAD_TOKEN": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.MemoryDir != "/data" || len(c.HTTP.Tokens) != 1 || c.HTTP.Tokens[0].SHA256 != sha256.Sum256([]byte("s3cret")) {
		t.Fatalf("%+v %+v", c.MemoryDir, c.HTTP.Tokens)
	}
	_, err = LoadWith("../docker/scratchpad.toml", testEnv(nil))
	if err == nil || !strings.Contains(err.Error(), "SCRATCHPAD_TOKEN") {
		t.Fatalf("without SCRATCHPAD_TOKEN: %v", err)
	}
}
