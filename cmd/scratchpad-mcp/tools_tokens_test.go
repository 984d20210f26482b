package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// The whole tools/list a coordinator sees without upstreams stays compact:
// issue 16 put keys, snapshots and reading options into the pad's existing
// tools rather than new ones. scripts/tools-list-tokens.sh measures the
// compact JSON of the listed tools (2,791 tokens before issue 16, 2,990
// after, claude-sonnet-4; 3,772 with issue 14's count_by and filter
// arguments); this counts go-sdk's re-encoding of them (3,811).
func TestToolsListTokens(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("memory_dir = %q\n", filepath.Join(dir, "mem"))), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Role": "coordinator"})
	res, err := c.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	n := tokens.ForModel("anthropic", "claude-sonnet-4").Count(data)
	t.Logf("tools/list: %d tools, %d tokens (claude-sonnet-4)", len(res.Tools), n)
	if len(res.Tools) != 15 || n > 3900 {
		t.Fatalf("tools/list has %d tools, %d tokens; the bound is 15 tools, 3,900 tokens", len(res.Tools), n)
	}
}
