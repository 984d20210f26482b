package testupstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the upstream serves besides tools, for proxies that must pass
// everything through.
const (
	TextURI      = "test://text"
	BlobURI      = "test://blob"
	ItemTemplate = "test://items/{id}"
	TextBody     = "plain text résumé\nsecond line"
	BlobBase64   = "AAECA/7/"                         // bytes 0 1 2 3 254 255
	ImageBase64  = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB" // a PNG header
	AudioBase64  = "UklGRiQAAABXQVZFZm10IBAAAAAB"     // a WAV header
	PromptName   = "greet"
	PageSize     = 8 // tools/list and the other lists are paginated by this
)

// Names the "name" argument of the greet prompt completes to.
var Names = []string{"ada", "alan", "alonzo", "barbara", "grace"}

var cancelled, rootsChanged atomic.Int64

// serverOptions are the capabilities and handlers the upstream declares
// besides its features.
func serverOptions() *mcp.ServerOptions {
	return &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
		},
		PageSize:          PageSize,
		CompletionHandler: complete,
		// Subscriptions are kept by go-sdk, for [mcp.Server.ResourceUpdated].
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) {
			rootsChanged.Add(1)
		},
	}
}

// complete completes the greet prompt's arguments from [Names], and a
// resource template's with two made-up values.
func complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	arg := req.Params.Argument
	if req.Params.Ref.Type == "ref/resource" {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{arg.Value + "1", arg.Value + "2"}, HasMore: true}}, nil
	}
	out := []string{}
	for _, n := range Names {
		if strings.HasPrefix(n, arg.Value) {
			out = append(out, n)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
}

// addTransparency registers what exercises every part of MCP a proxy
// must forward: mixed content, requests to the client mid-call, logs,
// cancellation, resources, templates, prompts.
func addTransparency(s *mcp.Server) {
	s.AddReceivingMiddleware(notFoundAsMCPGo)
	s.AddTool(tool("mixed", "returns every content type, structured content and _meta"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Meta: mcp.Meta{"upstream/trace": "abc-123"},
				Content: []mcp.Content{
					&mcp.TextContent{Text: "some text", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5}},
					&mcp.ImageContent{Data: decode(ImageBase64), MIMEType: "image/png"},
					&mcp.AudioContent{Data: decode(AudioBase64), MIMEType: "audio/wav"},
					&mcp.ResourceLink{URI: TextURI, Name: "text", Description: "a text resource", MIMEType: "text/plain"},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody}},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: BlobURI, MIMEType: "application/octet-stream", Blob: decode(BlobBase64)}},
				},
				StructuredContent: map[string]any{"count": 2, "items": []any{"a", "b"}},
			}, nil
		})
	s.AddTool(tool("tool_error", "returns a JSON-RPC error (a handler error)", arg{"message", "string", false}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, internalError(argsOf(req).str("message", "upstream refused"))
		})
	s.AddTool(tool("ask_sampling", "asks the client to sample (after delay_ms; meta = progress names the call's progress token), returns its answer as JSON", arg{"delay_ms", "number", false}, arg{"meta", "string", false}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				// Progress 0: the call has reached the upstream (tests
				// wait on it instead of sleeping).
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 0, Message: "started"})
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(argsOf(req).int("delay_ms", 0)) * time.Millisecond):
			}
			params := &mcp.CreateMessageParams{
				Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "what is 2+2?"}}},
				MaxTokens:    20,
				SystemPrompt: "be brief",
			}
			if tok := req.Params.GetProgressToken(); tok != nil && argsOf(req).str("meta", "") == "progress" {
				// As some servers do: the request names the call's token.
				params.Meta = mcp.Meta{"progressToken": tok}
			}
			res, err := req.Session.CreateMessage(ctx, params)
			return answer(res, err)
		})
	s.AddTool(tool("ask_elicitation", "asks the client for input (form, or url mode), returns its answer as JSON", arg{"mode", "string", false}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ereq := &mcp.ElicitParams{Message: "your name?"}
			if argsOf(req).str("mode", "") == "url" {
				ereq.Mode, ereq.URL, ereq.ElicitationID = "url", "https://example.com/consent", "el-1"
			} else {
				ereq.RequestedSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
			}
			res, err := req.Session.Elicit(ctx, ereq)
			if err == nil && ereq.Mode == "url" {
				// The out-of-band interaction is over at once.
				_ = req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: ereq.ElicitationID})
			}
			return answer(res, err)
		})
	s.AddTool(tool("client_caps", "returns the capabilities its client declared at initialize, as JSON"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := req.Session.InitializeParams()
			if p == nil || p.Capabilities == nil {
				return toolError("the session keeps no client info"), nil
			}
			// go-sdk's Roots is a struct, always marshalled; RootsV2
			// says whether the client declared roots.
			return answer(struct {
				*mcp.ClientCapabilities
				Roots *mcp.RootCapabilities `json:"roots,omitempty"`
			}{p.Capabilities, p.Capabilities.RootsV2}, nil)
		})
	s.AddTool(tool("ask_roots", "asks the client for its roots, returns them as JSON"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			return answer(res, err)
		})
	s.AddTool(tool("log", "sends one log message at each level, then answers"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
				// Log drops what is below the level the client (here:
				// the proxy) set with logging/setLevel.
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "testupstream", Data: "message at " + string(l)})
			}
			return text("logged"), nil
		})
	s.AddTool(tool("log_flood", "sends n info log messages of size bytes each, then answers", arg{"n", "number", true}, arg{"size", "number", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := argsOf(req)
			data := strings.Repeat("x", a.int("size", 100))
			for i := 0; i < a.int("n", 0); i++ {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "testupstream", Data: data})
			}
			return text("flooded"), nil
		})
	s.AddTool(tool("block", "waits until cancelled, counting cancellations"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	s.AddTool(tool("cancelled", "how many block calls were cancelled"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(cancelled.Load())), nil
		})
	s.AddTool(tool("roots_changed", "how many notifications/roots/list_changed arrived"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(rootsChanged.Load())), nil
		})
	s.AddTool(tool("drop_templates", "removes every resource template"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.RemoveResourceTemplates(ItemTemplate)
			return text("dropping templates"), nil
		})
	s.AddTool(tool("hang", "never answers, even when cancelled"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// Until the stdio session ends: go-sdk waits for its
			// handlers before it stops.
			<-ended
			return nil, internalError("the session ended")
		})
	s.AddTool(tool("touch", "says a resource was updated", arg{"uri", "string", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// To the sessions subscribed to uri.
			_ = s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: argsOf(req).str("uri", "")})
			return text("touched"), nil
		})
	s.AddTool(tool("add_prompt", "adds a prompt named name", arg{"name", "string", true}),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := argsOf(req).str("name", "")
			s.AddPrompt(&mcp.Prompt{Name: name, Description: "added at run time"},
				func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Description: "late", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + name}}}}, nil
				})
			return text("adding " + name), nil
		})
	// A second page of tools: more than PageSize in all.
	for i := 0; i < PageSize; i++ {
		name := fmt.Sprintf("page_tool_%d", i)
		s.AddTool(tool(name, "one of many"),
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return text(name), nil
			})
	}

	s.AddResource(&mcp.Resource{URI: TextURI, Name: "text", Description: "a text resource", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(&mcp.ResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody}), nil
		})
	s.AddResource(&mcp.Resource{URI: BlobURI, Name: "blob", Description: "a binary resource", MIMEType: "application/octet-stream"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return contents(&mcp.ResourceContents{URI: BlobURI, MIMEType: "application/octet-stream", Blob: decode(BlobBase64)}), nil
		})
	// More resources than a page.
	for i := 0; i < PageSize+2; i++ {
		uri := fmt.Sprintf("test://many/%02d", i)
		s.AddResource(&mcp.Resource{URI: uri, Name: fmt.Sprintf("many-%02d", i)},
			func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return contents(&mcp.ResourceContents{URI: uri, Text: uri}), nil
			})
	}
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ItemTemplate, Name: "item", Description: "an item by id", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimPrefix(req.Params.URI, "test://items/")
			return contents(&mcp.ResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: `{"id":"` + id + `"}`}), nil
		})

	s.AddPrompt(&mcp.Prompt{Name: PromptName, Description: "greets someone", Arguments: []*mcp.PromptArgument{
		{Name: "name", Description: "who", Required: true},
		{Name: "style", Description: "formal or casual"},
	}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			name := req.Params.Arguments["name"]
			if name == "" {
				return nil, internalError("argument name is required")
			}
			return &mcp.GetPromptResult{Description: "a greeting", Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Greet " + name + " in a " + req.Params.Arguments["style"] + " style."}},
				{Role: "user", Content: &mcp.ImageContent{Data: decode(ImageBase64), MIMEType: "image/png"}},
				{Role: "assistant", Content: &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody}}},
			}}, nil
		})
}

// notFoundAsMCPGo answers a resources/read of a URI no resource or
// template matches with the error mcp-go's server sent (code -32002,
// the URI in the message) instead of go-sdk's (-32602 "Resource not
// found", the URI in data).
func notFoundAsMCPGo(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var rerr *jsonrpc.Error
		if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && errors.As(err, &rerr) &&
			(rerr.Code == jsonrpc.CodeInvalidParams || rerr.Code == -32002) && rerr.Message == "Resource not found" {
			return nil, &jsonrpc.Error{Code: -32002, Message: fmt.Sprintf("handler not found for resource URI '%s': resource not found", p.URI)}
		}
		return res, err
	}
}

// answer returns a client's answer as the tool's JSON text, or its error
// as a tool error.
func answer(res any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return toolError("client error: " + err.Error()), nil
	}
	b, _ := json.Marshal(res)
	return text(string(b)), nil
}

func contents(c ...*mcp.ResourceContents) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: c}
}

// decode returns the bytes of base64 s; go-sdk encodes them again.
func decode(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
