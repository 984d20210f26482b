package pad

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type fakeSession struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func (s *fakeSession) SessionID() string                                   { return s.id }
func (s *fakeSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }
func (s *fakeSession) Initialize()                                         {}
func (s *fakeSession) Initialized() bool                                   { return true }

type harness struct {
	t   *testing.T
	srv *server.MCPServer
	id  int
}

func newHarness(t *testing.T, padFor func(context.Context) (*Pad, error), opts Options) *harness {
	srv := server.NewMCPServer("test", "0", server.WithResourceCapabilities(true, false))
	if err := RegisterWithOptions(srv, padFor, opts); err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, srv: srv}
}

func (h *harness) session(id string) (context.Context, *fakeSession) {
	s := &fakeSession{id: id, ch: make(chan mcp.JSONRPCNotification, 64)}
	if err := h.srv.RegisterSession(context.Background(), s); err != nil {
		h.t.Fatal(err)
	}
	return h.srv.WithContext(context.Background(), s), s
}

// call sends one JSON-RPC request and returns the result object.
func (h *harness) call(ctx context.Context, method string, params any) json.RawMessage {
	h.t.Helper()
	h.id++
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": h.id, "method": method, "params": params})
	resp := h.srv.HandleMessage(ctx, msg)
	data, _ := json.Marshal(resp)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(data, &env)
	if env.Error != nil {
		h.t.Fatalf("%s: protocol error %s", method, env.Error)
	}
	return env.Result
}

// tool calls a tool and returns its text and isError.
func (h *harness) tool(ctx context.Context, name string, args any) (string, bool) {
	h.t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	json.Unmarshal(h.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}), &res)
	if len(res.Content) != 1 {
		h.t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	return res.Content[0].Text, res.IsError
}

func drain(ch chan mcp.JSONRPCNotification) []mcp.JSONRPCNotification {
	var out []mcp.JSONRPCNotification
	for {
		select {
		case n := <-ch:
			out = append(out, n)
		default:
			return out
		}
	}
}

func TestMCPToolsResourcePrompt(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, sess := h.session("s1")

	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	json.Unmarshal(h.call(ctx, "tools/list", map[string]any{}), &list)
	for _, tl := range list.Tools {
		for _, banned := range []string{"owner", "agent", "run", `"pad"`, "thread"} {
			if strings.Contains(string(tl.InputSchema), banned) {
				t.Errorf("%s schema has identity argument %s: %s", tl.Name, banned, tl.InputSchema)
			}
		}
	}
	if len(list.Tools) != 3 {
		t.Fatalf("tools: %+v", list.Tools)
	}

	h.call(ctx, "resources/subscribe", map[string]any{"uri": ResourceURI})

	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Plan", "op": "append", "content": "first step"}}})
	if isErr || !strings.Contains(text, "+1. [ ] first step") {
		t.Fatalf("update: %v %s", isErr, text)
	}
	notes := drain(sess.ch)
	if len(notes) != 1 || notes[0].Method != mcp.MethodNotificationResourceUpdated || notes[0].Params.AdditionalFields["uri"] != ResourceURI {
		t.Fatalf("notifications after update: %+v", notes)
	}

	text, isErr = h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Vibes", "op": "append", "content": "x"}}})
	var obj map[string]any
	if isErr || json.Unmarshal([]byte(text), &obj) != nil || obj["error"] != "unknown_section" || !strings.Contains(obj["message"].(string), `unknown section "Vibes"`) {
		t.Fatalf("unknown section: %v %s", isErr, text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{}})
	if text != "no change\n" {
		t.Fatalf("empty patch list: %q", text)
	}
	if n := drain(sess.ch); len(n) != 0 {
		t.Fatalf("no-op notified: %+v", n)
	}

	text, _ = h.tool(ctx, ToolAppend, map[string]any{"note": ""})
	if !strings.Contains(text, `"error":"empty_note"`) {
		t.Fatalf("empty note: %s", text)
	}
	text, isErr = h.tool(ctx, ToolAppend, map[string]any{"note": "the API paginates at 100", "tags": []string{"api"}})
	if isErr || !strings.HasPrefix(text, "appended") || len(drain(sess.ch)) != 1 {
		t.Fatalf("append: %s", text)
	}

	text, _ = h.tool(ctx, ToolRead, map[string]any{"tags": []string{"api"}})
	if !strings.Contains(text, "1. [ ] first step") || !strings.Contains(text, "[api] the API paginates at 100") {
		t.Fatalf("read:\n%s", text)
	}

	var rr struct {
		Contents []struct{ URI, MimeType, Text string } `json:"contents"`
	}
	json.Unmarshal(h.call(ctx, "resources/read", map[string]any{"uri": ResourceURI}), &rr)
	if len(rr.Contents) != 1 || rr.Contents[0].MimeType != "text/markdown" || !strings.Contains(rr.Contents[0].Text, "first step") {
		t.Fatalf("resource: %+v", rr)
	}
	var pr struct {
		Messages []struct {
			Role    string
			Content struct{ Text string }
		}
	}
	json.Unmarshal(h.call(ctx, "prompts/get", map[string]any{"name": PromptName}), &pr)
	if len(pr.Messages) != 1 || !strings.Contains(pr.Messages[0].Content.Text, "first step") {
		t.Fatalf("prompt: %+v", pr)
	}

	h.call(ctx, "resources/unsubscribe", map[string]any{"uri": ResourceURI})
	h.tool(ctx, ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Next", "op": "replace", "content": "x"}}})
	if n := drain(sess.ch); len(n) != 0 {
		t.Fatalf("notified after unsubscribe: %+v", n)
	}
}

func TestMCPNotifiesOnlySessionsOfTheChangedPad(t *testing.T) {
	root := t.TempDir()
	pads := map[string]*Pad{}
	for _, run := range []string{"runA", "runB"} {
		p, err := Open(filepath.Join(root, run, "pad"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		pads[run] = p
	}
	type runKey struct{}
	h := newHarness(t, func(ctx context.Context) (*Pad, error) {
		run, _ := ctx.Value(runKey{}).(string)
		if p := pads[run]; p != nil {
			return p, nil
		}
		return nil, fmt.Errorf("no run")
	}, Options{})
	ctxA1, a1 := h.session("a1")
	ctxA1 = context.WithValue(ctxA1, runKey{}, "runA")
	ctxA2, a2 := h.session("a2")
	ctxA2 = context.WithValue(ctxA2, runKey{}, "runA")
	ctxB, b := h.session("b")
	ctxB = context.WithValue(ctxB, runKey{}, "runB")
	for _, ctx := range []context.Context{ctxA1, ctxA2, ctxB} {
		h.call(ctx, "resources/subscribe", map[string]any{"uri": ResourceURI})
	}
	h.tool(ctxA1, ToolAppend, map[string]any{"note": "shared by run A"})
	if len(drain(a1.ch)) != 1 || len(drain(a2.ch)) != 1 || len(drain(b.ch)) != 0 {
		t.Fatal("notification fan-out does not follow the pad")
	}
	text, _ := h.tool(ctxA2, ToolRead, map[string]any{})
	if !strings.Contains(text, "shared by run A") {
		t.Fatalf("run A's second agent does not see the shared ledger:\n%s", text)
	}
	text, _ = h.tool(ctxB, ToolRead, map[string]any{})
	if strings.Contains(text, "shared by run A") {
		t.Fatal("run B sees run A's pad")
	}
}

func TestMCPStructuredUpdate(t *testing.T) {
	opts := Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}
	p := newPad(t, opts)
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, opts)
	ctx, _ := h.session("s")
	text, isErr := h.tool(ctx, ToolUpdate, map[string]any{"state": map[string]any{"task": "t", "step": 1}})
	if isErr || !strings.Contains(text, `+  "step": 1,`) {
		t.Fatalf("merge: %s", text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"state": map[string]any{"step": "two"}})
	if !strings.Contains(text, `"error":"schema_violation"`) || !strings.Contains(text, `"state_unchanged":true`) {
		t.Fatalf("schema violation: %s", text)
	}
	text, _ = h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{}})
	if !strings.Contains(text, `"error":"wrong_format"`) {
		t.Fatalf("patches on structured pad: %s", text)
	}
}

func TestMCPNotifiesChangesMadeElsewhere(t *testing.T) {
	old := pollInterval
	pollInterval = 5 * time.Millisecond
	t.Cleanup(func() { pollInterval = old })

	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx, sess := h.session("s")
	h.call(ctx, "resources/subscribe", map[string]any{"uri": ResourceURI})

	// Another process appends to the shared ledger: simulate with a second
	// *Pad on the same directory, which this server's tools never see.
	other, err := Open(p.Dir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append("from another process", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-sess.ch:
		if n.Method != mcp.MethodNotificationResourceUpdated {
			t.Fatalf("notification %+v", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no notification for a change made outside the tools")
	}

	// A tool change is announced once, not again by the watcher.
	h.tool(ctx, ToolAppend, map[string]any{"note": "via tool"})
	<-sess.ch
	time.Sleep(50 * time.Millisecond) // several poll rounds
	if extra := drain(sess.ch); len(extra) != 0 {
		t.Fatalf("duplicate notifications: %d", len(extra))
	}

	// Unsubscribing stops the watcher's notifications.
	h.call(ctx, "resources/unsubscribe", map[string]any{"uri": ResourceURI})
	other.Append("after unsubscribe", nil)
	time.Sleep(50 * time.Millisecond)
	if extra := drain(sess.ch); len(extra) != 0 {
		t.Fatalf("notified after unsubscribe: %d", len(extra))
	}
}
