// Package testupstream is a small MCP server used by the tests as a real
// upstream: over stdio (the test binary re-executes itself) or streamable
// HTTP. It returns small and huge outputs, crashes on demand, changes its
// tool list, reports progress, and lists a tool whose schema uses what
// mcp-go's typed schema would drop. For transparency tests it also returns
// every content type, asks the client for sampling, elicitation and roots
// mid-call, logs, blocks until cancelled, serves text and binary
// resources, a template, prompts with arguments and completions, and
// paginates every list by [PageSize].
package testupstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// EnvMode selects the upstream mode when a test binary starts: set it to
// "stdio" (this package's mcp-go server) or [RawMode] and call [MaybeRun]
// from TestMain.
const EnvMode = "SCRATCHPAD_TESTUPSTREAM"

// FancySchema is the raw input schema of the "fancy" tool. Proxies must
// pass it through byte for byte.
const FancySchema = `{"type":"object","description":"top-level description kept","properties":{"q":{"anyOf":[{"type":"string"},{"type":"integer"}]},"mode":{"oneOf":[{"const":"a"},{"const":"b"}]},"unicode":{"type":"string","description":"ünïcødé <&>"}},"required":["q"],"additionalProperties":false}`

// MaybeRun runs the upstream and exits when the environment asks for it;
// otherwise it returns at once.
func MaybeRun() {
	maybeRunRaw()
	if os.Getenv(EnvMode) != "stdio" {
		return
	}
	if err := server.ServeStdio(New()); err != nil {
		fmt.Fprintln(os.Stderr, "testupstream:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

var calls atomic.Int64

// New builds the upstream server.
func New() *server.MCPServer {
	s := server.NewMCPServer("testupstream", "1.0.0", serverOptions()...)
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("returns text"), mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("words", mcp.WithDescription("returns n space-separated words"), mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(Words(req.GetInt("n", 0))), nil
		})
	s.AddTool(mcp.NewTool("listing", mcp.WithDescription("returns a Kubernetes-style pod listing with n items"), mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(string(Listing(req.GetInt("n", 0)))), nil
		})
	s.AddTool(mcp.NewTool("ndjson", mcp.WithDescription("returns n NDJSON log records"), mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b strings.Builder
			for i := 0; i < req.GetInt("n", 0); i++ {
				fmt.Fprintf(&b, `{"ts":"2026-11-30T10:%02d:%02dZ","level":"info","msg":"request %d served","status":200}`+"\n", i/60%60, i%60, i)
			}
			return mcp.NewToolResultText(b.String()), nil
		})
	s.AddTool(mcp.NewTool("structured", mcp.WithDescription("returns structured content of n items"), mcp.WithNumber("n", mcp.Required()),
		mcp.WithOutputSchema[map[string]any]()),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var v map[string]any
			_ = json.Unmarshal(Listing(req.GetInt("n", 0)), &v)
			return mcp.NewToolResultStructuredOnly(v), nil
		})
	s.AddTool(mcp.NewTool("image", mcp.WithDescription("returns a large image")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultImage(Words(5000), strings.Repeat("QUJD", 50000), "image/png"), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("returns a large error result")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("failure: " + Words(5000)), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("exits the upstream process mid-call")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "testupstream: crashing on request")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("reports progress, then answers"), mcp.WithNumber("steps"), mcp.WithNumber("ms")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			steps, ms := req.GetInt("steps", 3), req.GetInt("ms", 10)
			var tok any
			if req.Params.Meta != nil {
				tok = req.Params.Meta.ProgressToken
			}
			for i := 1; i <= steps; i++ {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Duration(ms) * time.Millisecond):
				}
				if tok != nil {
					_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
						map[string]any{"progressToken": tok, "progress": i, "total": steps})
				}
			}
			flush()
			return mcp.NewToolResultText("done after " + strconv.Itoa(steps) + " steps"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("fancy", "schema with anyOf/oneOf", json.RawMessage(FancySchema)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("fancy ok"), nil
		})
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("adds a tool named name"), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "")
			srv := server.ServerFromContext(ctx)
			// Added from a goroutine: AddTool notifies clients, and this
			// handler's reply must not wait behind that.
			go srv.AddTool(mcp.NewTool(name, mcp.WithDescription("added at run time")),
				func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return mcp.NewToolResultText("hello from " + name), nil
				})
			return mcp.NewToolResultText("adding " + name), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("returns the process id")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(strconv.Itoa(os.Getpid())), nil
		})
	addTransparency(s)
	return s
}

// flush gives notifications mcp-go queued time to be written before the
// result that follows them: mcp-go writes them from another goroutine.
func flush() { time.Sleep(50 * time.Millisecond) }

// Words returns n words separated by single spaces ("w0 w1 …" cycling a
// small vocabulary), so a whitespace word counter sees exactly n.
func Words(n int) string {
	var b strings.Builder
	vocab := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[i%len(vocab)])
	}
	return b.String()
}

// Listing returns a compact JSON pod listing with n items.
func Listing(n int) []byte {
	type meta struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	}
	type pod struct {
		Metadata meta           `json:"metadata"`
		Spec     map[string]any `json:"spec"`
		Status   map[string]any `json:"status"`
	}
	items := make([]pod, n)
	for i := range items {
		items[i] = pod{
			Metadata: meta{Name: fmt.Sprintf("web-%d", i), Namespace: []string{"default", "prod", "kube-system"}[i%3], Labels: map[string]string{"app": "web", "tier": "frontend"}},
			Spec:     map[string]any{"nodeName": fmt.Sprintf("node-%d", i%7), "containers": []any{map[string]any{"name": "app", "image": "nginx:1.27"}}},
			Status:   map[string]any{"phase": []string{"Running", "Pending", "Failed"}[i%3], "restarts": i % 5},
		}
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "PodList", "items": items})
	return b
}
