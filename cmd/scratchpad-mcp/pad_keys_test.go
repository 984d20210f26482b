package main

import (
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
)

// Keyed values and snapshots through two server processes sharing a Redis
// pad, and the CLI on it.
func TestRedisPadKeysAndSnapshots(t *testing.T) {
	srv := testredis.Start(t)
	cfgA, _ := writeConfig(t, redisPadConfig(srv.URL())+"default_ttl = \"1h\"\nheader = \"Run r1\"\n")
	cfgB, _ := writeConfig(t, redisPadConfig(srv.URL())+"default_ttl = \"1h\"\nheader = \"Run r1\"\n")
	baseA := startHTTP(t, "http", cfgA)
	baseB := startHTTP(t, "http", cfgB)
	alice := httpClient(t, baseA+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "r1"})
	bob := httpClient(t, baseB+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "r1"})

	out := callTool(t, alice, "update_scratchpad", map[string]any{"patches": []map[string]any{
		{"op": "set", "key": "current_pod", "value": "checkout-7f9", "tags": []string{"k8s"}},
		{"op": "set", "key": "task1:cursor", "value": map[string]any{"page": 2}, "ttl": 0},
		{"section": "Next", "op": "replace", "content": "read the events"},
	}})
	if !strings.Contains(out, `+current_pod = "checkout-7f9"  (tags k8s; ttl 3600s)`) || !strings.Contains(out, "+read the events") {
		t.Fatalf("set: %s", short(out))
	}
	if out := callTool(t, bob, "read_scratchpad", map[string]any{"keys": []string{"task1:"}, "format": "kv"}); !strings.HasPrefix(out, "header = \"Run r1\"\nkey.task1:cursor = {\"page\":2}\n") {
		t.Fatalf("bob reads alice's keys: %q", out)
	}
	if out := callTool(t, bob, "update_scratchpad", map[string]any{"patches": []map[string]any{{"op": "snapshot", "content": "before"}}}); !strings.Contains(out, `snapshot "before" taken`) {
		t.Fatalf("snapshot: %s", short(out))
	}
	callTool(t, alice, "update_scratchpad", map[string]any{"patches": []map[string]any{{"op": "delete", "key": "current_pod"}}})

	code, out, errOut := runCLI(t, "pad", "snapshots", "--config", cfgA, "--run", "r1")
	if code != 0 || out != "before\n" {
		t.Fatalf("pad snapshots: %d %q %s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "pad", "restore", "before", "--config", cfgA, "--run", "r1")
	if code != 0 || !strings.Contains(out, `+current_pod = "checkout-7f9"`) {
		t.Fatalf("pad restore before: %d\n%s\n%s", code, out, errOut)
	}
	if out := callTool(t, bob, "read_scratchpad", map[string]any{"keys": []string{"current_pod"}, "format": "json"}); !strings.Contains(out, `"value": "checkout-7f9"`) {
		t.Fatalf("after the CLI restore: %s", short(out))
	}
	code, out, _ = runCLI(t, "pad", "show", "--config", cfgB, "--run", "r1", "--render", "kv")
	if code != 0 || !strings.Contains(out, `key.current_pod = "checkout-7f9"`) || !strings.Contains(out, `restored snapshot \"before\"`) {
		t.Fatalf("pad show --render kv: %d\n%s", code, out)
	}
}

// [pad] read_only leaves the model read_scratchpad only.
func TestPadReadOnlyTools(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[pad]\nread_only = true\n")
	base := startHTTP(t, "http", cfg)
	c := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice"})
	names := map[string]bool{}
	res, err := c.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		names[tl.Name] = true
	}
	if !names["read_scratchpad"] || names["update_scratchpad"] || names["append_scratchpad"] {
		t.Fatalf("tools with read_only: %v", names)
	}
}
