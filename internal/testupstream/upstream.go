// Package testupstream is a small MCP server used by the tests as a real
// upstream: over stdio (the test binary re-executes itself) or streamable
// HTTP (or the legacy HTTP+SSE transport). It returns small and huge
// outputs, crashes on demand, changes its tool list, reports progress, and
// lists a tool whose raw schema uses what a typed schema would drop. For
// transparency tests it also returns every content type, asks the client
// for sampling, elicitation and roots mid-call, logs, blocks until
// cancelled, serves text and binary resources, a template, prompts with
// arguments and completions, and paginates every list by [PageSize].
package testupstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EnvMode selects the upstream mode when a test binary starts: set it to
// "stdio" (this package's go-sdk server), [RawMode] or [BenchMode] and call [MaybeRun]
// from TestMain.
const EnvMode = "SCRATCHPAD_TESTUPSTREAM"

// FancySchema is the raw input schema of the "fancy" tool. Proxies must
// pass it through byte for byte.
const FancySchema = `{"type":"object","description":"top-level description kept","properties":{"q":{"anyOf":[{"type":"string"},{"type":"integer"}]},"mode":{"oneOf":[{"const":"a"},{"const":"b"}]},"unicode":{"type":"string","description":"ünïcødé <&>"}},"required":["q"],"additionalProperties":false}`

// MaybeRun runs the upstream and exits when the environment asks for it;
// otherwise it returns at once.
func MaybeRun() {
	maybeRunRaw()
	maybeRunBench()
	switch os.Getenv(EnvMode) {
	case "stdio":
		runStdio("testupstream", New())
	case LeakyMode:
		runStdio("testupstream leaky", Leaky())
	case AppsMode:
		runStdio("testupstream apps", Apps())
	}
}

// runStdio serves s on stdin and stdout until the input ends, then exits
// the process (1 on an error, named by name).
func runStdio(name string, s *mcp.Server) {
	t := &mcp.IOTransport{Reader: &stdin{r: os.Stdin}, Writer: nopCloser{os.Stdout}}
	if err := s.Run(context.Background(), t); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Handler serves a new upstream over streamable HTTP, at any path. Every
// session shares the one server (its tools, prompts and subscriptions).
func Handler() http.Handler {
	s := New()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// SSEHandler serves a new upstream over the legacy HTTP+SSE transport, at
// any path: a GET opens the event stream, whose "endpoint" event names the
// URL to POST messages to. Its requests to the client (sampling,
// elicitation, roots) travel on that stream.
func SSEHandler() http.Handler {
	s := New()
	return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// ended is closed when stdin ends: the stdio session is over, and "hang"
// may return so that the server can stop.
var (
	ended     = make(chan struct{})
	endedOnce sync.Once
)

// stdin closes ended at the end of its input.
type stdin struct{ r io.ReadCloser }

func (s *stdin) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil {
		endedOnce.Do(func() { close(ended) })
	}
	return n, err
}

func (s *stdin) Close() error { return s.r.Close() }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

var calls atomic.Int64

// New builds the upstream server.
func New() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testupstream", Version: "1.0.0"}, serverOptions())
	s.AddTool(tool("echo", "returns text", arg{"text", "string", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return text(argsOf(req).str("text", "")), nil
		})
	s.AddTool(tool("echo_calls", "returns how many echo calls this process answered"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.FormatInt(calls.Load(), 10)), nil
		})
	s.AddTool(tool("echo_meta", "returns the request's params._meta as JSON (trace context: SEP-414)"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return text(string(b)), nil
		})
	s.AddTool(tool("words", "returns n space-separated words", arg{"n", "number", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(Words(argsOf(req).int("n", 0))), nil
		})
	s.AddTool(tool("listing", "returns a Kubernetes-style pod listing with n items", arg{"n", "number", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(string(Listing(argsOf(req).int("n", 0)))), nil
		})
	s.AddTool(tool("ndjson", "returns n NDJSON log records", arg{"n", "number", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var b strings.Builder
			for i := 0; i < argsOf(req).int("n", 0); i++ {
				fmt.Fprintf(&b, `{"ts":"2026-11-30T10:%02d:%02dZ","level":"info","msg":"request %d served","status":200}`+"\n", i/60%60, i%60, i)
			}
			return text(b.String()), nil
		})
	structured := tool("structured", "returns structured content of n items", arg{"n", "number", true})
	structured.OutputSchema = map[string]any{"type": "object", "properties": map[string]any{}, "required": []string{}, "additionalProperties": true}
	s.AddTool(structured,
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b := Listing(argsOf(req).int("n", 0))
			var v map[string]any
			_ = json.Unmarshal(b, &v)
			// The text is the structured content as JSON, keys sorted.
			b, _ = json.Marshal(v)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: v}, nil
		})
	s.AddTool(tool("image", "returns a large image"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// The data is "QUJD" (ABC) 50000 times in base64.
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: Words(5000)},
				&mcp.ImageContent{Data: bytes.Repeat([]byte("ABC"), 50000), MIMEType: "image/png"},
			}}, nil
		})
	s.AddTool(tool("fail", "returns a large error result"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return toolError("failure: " + Words(5000)), nil
		})
	s.AddTool(tool("crash", "exits the upstream process mid-call"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "testupstream: crashing on request")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(tool("slow", "reports progress, then answers", arg{"steps", "number", false}, arg{"ms", "number", false}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := argsOf(req)
			steps, ms := a.int("steps", 3), a.int("ms", 10)
			tok := req.Params.GetProgressToken()
			for i := 1; i <= steps; i++ {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Duration(ms) * time.Millisecond):
				}
				if tok != nil {
					// Sent with the call's context: on the call's own
					// stream, before its result.
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(steps)})
				}
			}
			return text("done after " + strconv.Itoa(steps) + " steps"), nil
		})
	s.AddTool(&mcp.Tool{Name: "fancy", Description: "schema with anyOf/oneOf", InputSchema: json.RawMessage(FancySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("fancy ok"), nil
		})
	s.AddTool(tool("add_tool", "adds a tool named name", arg{"name", "string", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := argsOf(req).str("name", "")
			// go-sdk sends tools/list_changed later (debounced), so
			// this reply does not wait behind it.
			s.AddTool(tool(name, "added at run time"),
				func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return text("hello from " + name), nil
				})
			return text("adding " + name), nil
		})
	s.AddTool(tool("pid", "returns the process id"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	addTransparency(s)
	if os.Getenv(EnvByCapabilities) != "" {
		s.AddReceivingMiddleware(listByCapabilities)
	}
	return s
}

// EnvByCapabilities, set to any value, makes the upstream list its
// sampling, elicitation and roots tools only to a client that declared
// that capability, as server-everything does.
const EnvByCapabilities = "SCRATCHPAD_TESTUPSTREAM_BY_CAPS"

func listByCapabilities(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		lr, ok := res.(*mcp.ListToolsResult)
		if method != "tools/list" || err != nil || !ok {
			return res, err
		}
		caps := &mcp.ClientCapabilities{}
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.InitializeParams() != nil && ss.InitializeParams().Capabilities != nil {
			caps = ss.InitializeParams().Capabilities
		}
		needs := map[string]bool{"ask_sampling": caps.Sampling != nil, "ask_elicitation": caps.Elicitation != nil, "ask_roots": caps.RootsV2 != nil}
		out := *lr
		out.Tools = nil
		for _, t := range lr.Tools {
			if ok, listed := needs[t.Name]; !listed || ok {
				out.Tools = append(out.Tools, t)
			}
		}
		return &out, nil
	}
}

// arg is one argument of a tool's input schema.
type arg struct {
	name, typ string
	required  bool
}

// tool describes a tool whose input schema is an object of args, as
// mcp-go's typed schema wrote it.
func tool(name, desc string, args ...arg) *mcp.Tool {
	props, required := map[string]any{}, []string{}
	for _, a := range args {
		props[a.name] = map[string]any{"type": a.typ}
		if a.required {
			required = append(required, a.name)
		}
	}
	return &mcp.Tool{Name: name, Description: desc,
		InputSchema: map[string]any{"type": "object", "properties": props, "required": required}}
}

// args are a call's arguments.
type args map[string]any

func argsOf(req *mcp.CallToolRequest) args {
	var a args
	_ = json.Unmarshal(req.Params.Arguments, &a)
	return a
}

// str returns the string argument k, or def.
func (a args) str(k, def string) string {
	if s, ok := a[k].(string); ok {
		return s
	}
	return def
}

// int returns the argument k as an int (from a number or a numeric
// string), or def.
func (a args) int(k string, def int) int {
	switch v := a[k].(type) {
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// text is a tool result of one text.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// toolError is a tool result of one text, flagged as an error.
func toolError(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// internalError is a handler's error as mcp-go's server sent it: code
// -32603 and the message.
func internalError(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

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
