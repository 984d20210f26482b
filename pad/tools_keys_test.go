package pad

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestToolsKeys(t *testing.T) {
	clock := newTestClock()
	opts := Options{Now: clock.Now}
	p := newPad(t, opts)
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, opts)
	ctx, s := h.session("s")
	ctx = WithAuthor(ctx, "alice")
	h.subscribe(ctx, s)

	// Set keys beside a section patch, in one call.
	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{
		map[string]any{"op": "set", "key": "current_pod", "value": "checkout-7f9", "tags": []string{"k8s"}},
		map[string]any{"section": "Task", "op": "replace", "content": "find the restarts"},
		map[string]any{"op": "set", "key": "task1:cursor", "value": map[string]any{"page": 2}, "ttl": 60, "sliding": true},
	}})
	if isErr || !strings.Contains(text, "+find the restarts") || !strings.Contains(text, `+current_pod = "checkout-7f9"  (tags k8s)`) || !strings.Contains(text, `+task1:cursor = {"page":2}  (ttl 60s sliding)`) {
		t.Fatalf("set: %s", text)
	}
	if got := drain(s.ch); len(got) != 1 {
		t.Fatalf("notifications after a key change: %v", got)
	}
	// An error names the patch by its place in the call, and nothing
	// changes.
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{
		map[string]any{"op": "delete", "key": "current_pod"},
		map[string]any{"section": "Plan", "op": "append", "content": "x"},
		map[string]any{"op": "set", "key": "bad key", "value": 1},
	}})
	if !strings.Contains(text, `"error":"bad_patch"`) || !strings.Contains(text, `"patch":3`) || !strings.Contains(text, `"state_unchanged":true`) {
		t.Fatalf("bad key: %s", text)
	}
	if _, ok, _ := p.Get("current_pod"); !ok {
		t.Fatal("a refused call deleted a key")
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "frobnicate"}}})
	if !strings.Contains(text, `"error":"unknown_section"`) && !strings.Contains(text, `"error":"unknown_op"`) {
		t.Fatalf("unknown op: %s", text)
	}

	// Read: everything, some keys, formats, max_tokens.
	text, _ = h.tool(ctx, ToolRead, map[string]any{})
	if !strings.Contains(text, "## Keys (update_scratchpad set/delete; 2 shown of 2)") || !strings.Contains(text, "find the restarts") {
		t.Fatalf("read: %s", text)
	}
	text, _ = h.tool(ctx, ToolRead, map[string]any{"keys": []string{"task1:"}, "format": "kv"})
	if text != "key.task1:cursor = {\"page\":2}  # ttl 60s sliding, expires 2026-03-01 12:01:00Z\nkey_stats = \"1 key, 22 bytes; namespaces: task1 1; 1 with TTL (1 sliding)\"\n" {
		t.Fatalf("read keys kv: %q", text)
	}
	text, _ = h.tool(ctx, ToolRead, map[string]any{"keys": []string{"current_pod"}, "format": "json"})
	var got struct {
		Keys []struct {
			Name  string
			Value json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || len(got.Keys) != 1 || string(got.Keys[0].Value) != `"checkout-7f9"` {
		t.Fatalf("read one key as json: %s %v", text, err)
	}
	for _, args := range []map[string]any{{"format": "yaml"}, {"keys": []string{"a b"}}, {"max_tokens": -1}} {
		if text, _ := h.tool(ctx, ToolRead, args); !strings.Contains(text, `"error":"invalid_arguments"`) {
			t.Fatalf("%v: %s", args, text)
		}
	}
	// The model's reads renew the sliding key.
	clock.Add(50 * time.Second)
	before := stampOf(t, p)
	h.tool(ctx, ToolRead, map[string]any{"keys": []string{"task1:cursor"}})
	if after := stampOf(t, p); after != before {
		t.Fatalf("a renewal changed the stamp: %s → %s", before, after)
	}
	clock.Add(50 * time.Second)
	if text, _ := h.tool(ctx, ToolRead, map[string]any{"keys": []string{"task1:"}}); !strings.Contains(text, "task1:cursor") {
		t.Fatalf("sliding key not renewed by read_scratchpad: %s", text)
	}
	if got := drain(s.ch); len(got) != 0 {
		t.Fatalf("a renewal notified subscribers: %v", got)
	}
	// The resource shows keys and renews nothing.
	res := Resource(func(context.Context) (*Pad, error) { return p, nil })
	out, err := res.Read(ctx)
	if err != nil || !strings.Contains(out, "current_pod") {
		t.Fatalf("resource: %s %v", out, err)
	}

	// Snapshot and restore through the tool.
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "snapshot", "content": "before"}}})
	if !strings.Contains(text, `snapshot "before" taken`) {
		t.Fatalf("snapshot: %s", text)
	}
	h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "delete", "key": "current_pod"}}})
	drain(s.ch)
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "restore", "content": "before"}}})
	if !strings.Contains(text, `+current_pod = "checkout-7f9"`) || !strings.Contains(text, `restored snapshot "before"`) {
		t.Fatalf("restore: %s", text)
	}
	if got := drain(s.ch); len(got) != 1 {
		t.Fatalf("notifications after a restore: %v", got)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "restore", "content": "nope"}}})
	if !strings.Contains(text, `"error":"no_snapshot"`) || !strings.Contains(text, `"snapshots":["before"]`) {
		t.Fatalf("restore nope: %s", text)
	}
	entries, _ := ledgerOf(t, p)
	if len(entries) != 1 || entries[0].By != "alice" {
		t.Fatalf("ledger after restore: %+v", entries)
	}
}

func TestToolsKeysOnStructuredPad(t *testing.T) {
	opts := Options{Format: FormatJSON}
	p := newPad(t, opts)
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, opts)
	ctx, _ := h.session("s")
	text, _ := h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "set", "key": "k", "value": []int{1, 2}}}})
	if !strings.Contains(text, "+k = [1,2]") {
		t.Fatalf("set on a structured pad: %s", text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"section": "Task", "op": "append", "content": "x"}}})
	if !strings.Contains(text, `"error":"wrong_format"`) {
		t.Fatalf("section patch on a structured pad: %s", text)
	}
	text, _ = h.tool(ctx, ToolRead, map[string]any{"format": "kv"})
	if !strings.Contains(text, "state = {}") || !strings.Contains(text, "key.k = [1,2]") {
		t.Fatalf("read: %s", text)
	}
}
