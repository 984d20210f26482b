package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestDeepOutputIsDivertedAsText: through the binary, a tool returning 24
// MB of arrays opened twelve million deep (text a recursive JSON validator
// dies of, with a fatal stack overflow) is diverted and stored as text,
// and the proxy serves the next call.
func TestDeepOutputIsDivertedAsText(t *testing.T) {
	if testing.Short() {
		t.Skip("24 MB through the binary")
	}
	cfg := blobConfig(t)
	c := stdioSession(t, nil, binary(t), "serve", "--config", cfg)
	defer c.Close()
	waitForTool(t, c, "blob")
	for _, format := range []string{"deep", "json"} {
		res, err := c.CallTool(t.Context(), &mcp.CallToolParams{Name: "blob", Arguments: map[string]any{"mb": 24, "format": format}})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		meta, _ := res.Meta["scratchpad/diverted"].(map[string]any)
		want := map[string]string{"deep": "txt", "json": "json"}[format]
		if res.IsError || meta == nil || meta["format"] != want {
			t.Fatalf("%s: diverted %v, want format %s: %.300s", format, meta, want, strings.TrimSpace(text(res)))
		}
	}
}

// blobConfig is a config file mounting the bench upstream, whose blob tool
// returns megabytes of a chosen format, diverted from 1,000 tokens.
func blobConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "blob.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`memory_dir = %q

[agent]
model = "gpt-4o"

[mcp.servers.b]
transport = "stdio"
cmd = [%q]
env = { SCRATCHPAD_TESTUPSTREAM = %q }

[mcp.servers.b.scratchpad]
"blob" = { min_tokens = 1000 }
`, filepath.Join(dir, "mem"), upstreamCmd(), testupstream.BenchMode)), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}
