package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
)

type padSession struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func (s *padSession) SessionID() string                                   { return s.id }
func (s *padSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.ch }
func (s *padSession) Initialize()                                         {}
func (s *padSession) Initialized() bool                                   { return true }

// TestMCPGoPad drives the pad through mcp-go as a client would: tools,
// the resource and its subscription, the prompt.
func TestMCPGoPad(t *testing.T) {
	p, err := pad.Open(t.TempDir(), pad.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.NewMCPServer("test", "0", server.WithResourceCapabilities(true, false))
	if err := addMCPGoPad(srv, func(context.Context) (*pad.Pad, error) { return p, nil }, pad.Options{}); err != nil {
		t.Fatal(err)
	}
	sess := &padSession{id: "s1", ch: make(chan mcp.JSONRPCNotification, 64)}
	if err := srv.RegisterSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	ctx := srv.WithContext(context.Background(), sess)
	id := 0
	call := func(method string, params any) json.RawMessage {
		t.Helper()
		id++
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		data, _ := json.Marshal(srv.HandleMessage(ctx, msg))
		var env struct{ Result, Error json.RawMessage }
		json.Unmarshal(data, &env)
		if env.Error != nil {
			t.Fatalf("%s: protocol error %s", method, env.Error)
		}
		return env.Result
	}
	tool := func(name string, args any) (string, bool) {
		t.Helper()
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		json.Unmarshal(call("tools/call", map[string]any{"name": name, "arguments": args}), &res)
		if len(res.Content) != 1 {
			t.Fatalf("%s: %d content items", name, len(res.Content))
		}
		return res.Content[0].Text, res.IsError
	}
	notes := func() int {
		n := 0
		for {
			select {
			case m := <-sess.ch:
				if m.Method != mcp.MethodNotificationResourceUpdated || m.Params.AdditionalFields["uri"] != pad.ResourceURI {
					t.Fatalf("notification %+v", m)
				}
				n++
			default:
				return n
			}
		}
	}

	var list struct {
		Tools []struct {
			Name        string
			Annotations map[string]bool
		}
	}
	json.Unmarshal(call("tools/list", map[string]any{}), &list)
	if len(list.Tools) != 3 {
		t.Fatalf("tools: %+v", list.Tools)
	}
	for _, tl := range list.Tools {
		if ro, ok := tl.Annotations["readOnlyHint"]; !ok || ro != (tl.Name == pad.ToolRead) {
			t.Errorf("%s annotations %v", tl.Name, tl.Annotations)
		}
	}

	call("resources/subscribe", map[string]any{"uri": pad.ResourceURI})
	text, isErr := tool(pad.ToolUpdate, map[string]any{"patches": []map[string]any{{"section": "Plan", "op": "append", "content": "first step"}}})
	if isErr || !strings.Contains(text, "+1. [ ] first step") || notes() != 1 {
		t.Fatalf("update: %v %s", isErr, text)
	}
	if text, _ := tool(pad.ToolUpdate, map[string]any{"patches": []any{}}); text != "no change\n" || notes() != 0 {
		t.Fatalf("empty patch list: %q", text)
	}

	var rr struct {
		Contents []struct{ URI, MimeType, Text string }
	}
	json.Unmarshal(call("resources/read", map[string]any{"uri": pad.ResourceURI}), &rr)
	if len(rr.Contents) != 1 || rr.Contents[0].MimeType != "text/markdown" || !strings.Contains(rr.Contents[0].Text, "first step") {
		t.Fatalf("resource: %+v", rr)
	}
	var pr struct {
		Messages []struct {
			Role    string
			Content struct{ Text string }
		}
	}
	json.Unmarshal(call("prompts/get", map[string]any{"name": pad.PromptName}), &pr)
	if len(pr.Messages) != 1 || pr.Messages[0].Role != "user" || !strings.Contains(pr.Messages[0].Content.Text, "first step") {
		t.Fatalf("prompt: %+v", pr)
	}

	call("resources/unsubscribe", map[string]any{"uri": pad.ResourceURI})
	if _, isErr := tool(pad.ToolAppend, map[string]any{"note": "after unsubscribe"}); isErr || notes() != 0 {
		t.Fatal("notified after unsubscribe")
	}
	call("resources/subscribe", map[string]any{"uri": pad.ResourceURI})
	srv.UnregisterSession(context.Background(), sess.id)
	if _, isErr := tool(pad.ToolAppend, map[string]any{"note": "session gone"}); isErr || notes() != 0 {
		t.Fatal("notified a session that is gone")
	}
}

// TestMCPGoArtifacts: workers are neither listed nor allowed
// write_artifact, and a handler's IsError result stays one.
func TestMCPGoArtifacts(t *testing.T) {
	type roleKey struct{}
	envFor := func(ctx context.Context) (*artifacts.Env, error) {
		role, _ := ctx.Value(roleKey{}).(string)
		if role == "" {
			return nil, errors.New("no session")
		}
		return &artifacts.Env{Role: role}, nil
	}
	srv := server.NewMCPServer("test", "0", server.WithToolCapabilities(true), server.WithToolFilter(mcpgoArtifactFilter(envFor)))
	srv.AddTools(mcpgoTools(artifacts.Tools(envFor))...)
	send := func(role, method string, params any) string {
		ctx := context.WithValue(context.Background(), roleKey{}, role)
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		data, _ := json.Marshal(srv.HandleMessage(ctx, msg))
		return string(data)
	}
	names := func(role string) []string {
		var resp struct {
			Result struct{ Tools []struct{ Name string } }
		}
		json.Unmarshal([]byte(send(role, "tools/list", map[string]any{})), &resp)
		var out []string
		for _, tl := range resp.Result.Tools {
			out = append(out, tl.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(artifacts.RoleCoordinator); !slices.Equal(got, []string{artifacts.ToolList, artifacts.ToolRead, artifacts.ToolWrite}) {
		t.Errorf("coordinator lists %v", got)
	}
	if got := names("worker"); !slices.Equal(got, []string{artifacts.ToolList, artifacts.ToolRead}) {
		t.Errorf("worker lists %v", got)
	}
	write := map[string]any{"name": artifacts.ToolWrite, "arguments": map[string]any{"filename": "x.md", "content": "x"}}
	if got := send("worker", "tools/call", write); !strings.Contains(got, `"error"`) || strings.Contains(got, `"written"`) {
		t.Errorf("worker called write_artifact: %s", got)
	}
	list := map[string]any{"name": artifacts.ToolList}
	if got := send("", "tools/call", list); !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "no session") {
		t.Errorf("envFor error: %s", got)
	}
	if got := send("worker", "tools/call", list); strings.Contains(got, `"isError":true`) || !strings.Contains(got, `\"artifacts\":[]`) {
		t.Errorf("list: %s", got)
	}
}
