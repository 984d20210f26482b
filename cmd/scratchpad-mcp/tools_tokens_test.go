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
// arguments); this counts go-sdk's re-encoding of them, which sends <, >
// and & as \u003c, \u003e and \u0026. Issue 28 cut it from 3,618 o200k /
// 3,875 claude-sonnet-4 tokens here (3,574 / 3,836 by the script; a
// worker's 14 tools 3,388 / 3,636) to 2,440 / 2,579 (script 2,436 / 2,584;
// worker 2,311 / 2,451): shorter descriptions and shared argument wording,
// no additionalProperties:false, no destructiveHint on read-only tools.
// Issue 39 gave every argument its bound (maximum, maxLength, and maxItems
// for the pad's lists; no descriptions): 2,440 / 2,579 became 2,722 /
// 2,857. The bounds are those figures + 2%. Issue 56 told the model, in
// read's description, how to hand a stored output to another tool by
// reference: 2,766 / 2,906 became 2,799 / 2,942 (+33 / +36), bounds
// raised by as much.
func TestToolsListTokens(t *testing.T) {
	n, no, nc := listTokens(t, "")
	if n != 15 || no > 2809 || nc > 2950 {
		t.Fatalf("tools/list has %d tools, %d o200k and %d claude-sonnet-4 tokens; the bound is 15 tools, 2,809 o200k and 2,950 claude-sonnet-4 tokens", n, no, nc)
	}
	// Search mode adds search_tools and call_tool: at most 600 tokens
	// (issue 28), in place of every upstream tool.
	sn, sno, snc := listTokens(t, "\n[catalogue]\nmode = \"search\"\n")
	t.Logf("search mode adds %d o200k, %d claude-sonnet-4 tokens", sno-no, snc-nc)
	if sn != n+2 || sno-no > 600 || snc-nc > 600 {
		t.Fatalf("search mode lists %d tools, %d o200k (+%d) and %d claude-sonnet-4 (+%d) tokens; the bound is own tools + 2 and + 600 tokens", sn, sno, sno-no, snc, snc-nc)
	}
}

// listTokens lists a coordinator's tools with no upstreams configured and
// counts them as go-sdk encodes them.
func listTokens(t *testing.T, extra string) (n, o200kTokens, claudeTokens int) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("memory_dir = %q\n", filepath.Join(dir, "mem"))+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Role": "coordinator"})
	res, err := c.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	o200k, claude := tokens.ForModel("openai", "gpt-4o"), tokens.ForModel("anthropic", "claude-sonnet-4")
	for _, tl := range res.Tools {
		data, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-18s %4d o200k %4d claude-sonnet-4", tl.Name, o200k.Count(data), claude.Count(data))
	}
	data, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	no, nc := o200k.Count(data), claude.Count(data)
	t.Logf("tools/list: %d tools, %d tokens o200k, %d claude-sonnet-4", len(res.Tools), no, nc)
	return len(res.Tools), no, nc
}
