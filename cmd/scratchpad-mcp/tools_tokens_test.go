package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// 2,857. The bounds are those figures + 2%, for the listing without the
// memory tool. Issue 56 told the model, in read's description, how to
// hand a stored output to another tool by reference: +33 / +36, bounds
// raised by as much (2,809 / 2,950). Issue 57 put the memory tool in the listing by default,
// and nothing else: the listing grows by its own entry, no more
// (measured: 2,766 → 3,144 o200k, 2,906 → 3,296 claude-sonnet-4 by the
// script; the tool alone 381 / 394), and its entry stays within 400 /
// 415 tokens (the measure + 5%).
func TestToolsListTokens(t *testing.T) {
	const noMemory = "\n[agent.scratchpad]\nmemory_tool = \"\"\n"
	_, n, no, nc := listTokens(t, noMemory)
	if n != 15 || no > 2809 || nc > 2950 {
		t.Fatalf("tools/list without the memory tool has %d tools, %d o200k and %d claude-sonnet-4 tokens; the bound is 15 tools, 2,809 o200k and 2,950 claude-sonnet-4 tokens", n, no, nc)
	}
	tools, mn, mno, mnc := listTokens(t, "")
	mo, mc := toolTokens(t, tools, "memory")
	t.Logf("the memory tool adds %d o200k, %d claude-sonnet-4 tokens; its entry is %d / %d", mno-no, mnc-nc, mo, mc)
	// Its entry, and the comma before it.
	if mn != n+1 || mno-no > mo+1 || mnc-nc > mc+1 || mo > 400 || mc > 415 {
		t.Fatalf("with the memory tool: %d tools, +%d o200k and +%d claude-sonnet-4 tokens, its own entry %d / %d; the bound is one tool more, no more than its entry, and an entry of 400 / 415", mn, mno-no, mnc-nc, mo, mc)
	}
	// Search mode adds search_tools and call_tool: at most 600 tokens
	// (issue 28), in place of every upstream tool.
	_, sn, sno, snc := listTokens(t, noMemory+"\n[catalogue]\nmode = \"search\"\n")
	t.Logf("search mode adds %d o200k, %d claude-sonnet-4 tokens", sno-no, snc-nc)
	if sn != n+2 || sno-no > 600 || snc-nc > 600 {
		t.Fatalf("search mode lists %d tools, %d o200k (+%d) and %d claude-sonnet-4 (+%d) tokens; the bound is own tools + 2 and + 600 tokens", sn, sno, sno-no, snc, snc-nc)
	}
}

// toolTokens counts one tool's entry of a listing, as listTokens does.
func toolTokens(t *testing.T, tools []*mcp.Tool, name string) (o200kTokens, claudeTokens int) {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			data, err := json.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			return tokens.ForModel("openai", "gpt-4o").Count(data), tokens.ForModel("anthropic", "claude-sonnet-4").Count(data)
		}
	}
	t.Fatalf("no tool %s listed", name)
	return 0, 0
}

// listTokens lists a coordinator's tools with no upstreams configured and
// counts them as go-sdk encodes them.
func listTokens(t *testing.T, extra string) (tools []*mcp.Tool, n, o200kTokens, claudeTokens int) {
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
	tools = res.Tools
	o200k, claude := tokens.ForModel("openai", "gpt-4o"), tokens.ForModel("anthropic", "claude-sonnet-4")
	for _, tl := range tools {
		data, err := json.Marshal(tl)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-18s %4d o200k %4d claude-sonnet-4", tl.Name, o200k.Count(data), claude.Count(data))
	}
	data, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	no, nc := o200k.Count(data), claude.Count(data)
	t.Logf("tools/list: %d tools, %d tokens o200k, %d claude-sonnet-4", len(tools), no, nc)
	return tools, len(tools), no, nc
}
