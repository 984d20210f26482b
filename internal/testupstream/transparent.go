package testupstream

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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

// serverOptions are the capabilities the upstream declares.
func serverOptions() []server.ServerOption {
	return []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithLogging(),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{}),
		server.WithResourceCompletionProvider(completions{}),
		server.WithPaginationLimit(PageSize),
	}
}

type completions struct{}

func (completions) CompletePromptArgument(ctx context.Context, prompt string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	var out []string
	for _, n := range Names {
		if strings.HasPrefix(n, arg.Value) {
			out = append(out, n)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}, nil
}

func (completions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	return &mcp.Completion{Values: []string{arg.Value + "1", arg.Value + "2"}, HasMore: true}, nil
}

// addTransparency registers what exercises every part of MCP a proxy
// must forward: mixed content, requests to the client mid-call, logs,
// cancellation, resources, templates, prompts.
func addTransparency(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("mixed", mcp.WithDescription("returns every content type, structured content and _meta")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := mcp.NewTextContent("some text")
			text.Annotations = &mcp.Annotations{Audience: []mcp.Role{mcp.RoleUser}, Priority: ptr(0.5)}
			return &mcp.CallToolResult{
				Result: mcp.Result{Meta: mcp.NewMetaFromMap(map[string]any{"upstream/trace": "abc-123"})},
				Content: []mcp.Content{
					text,
					mcp.NewImageContent(ImageBase64, "image/png"),
					mcp.NewAudioContent(AudioBase64, "audio/wav"),
					mcp.NewResourceLink(TextURI, "text", "a text resource", "text/plain"),
					mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody}),
					mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: BlobURI, MIMEType: "application/octet-stream", Blob: BlobBase64}),
				},
				StructuredContent: map[string]any{"count": 2, "items": []any{"a", "b"}},
			}, nil
		})
	s.AddTool(mcp.NewTool("tool_error", mcp.WithDescription("returns a JSON-RPC error (a handler error)"), mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("%s", req.GetString("message", "upstream refused"))
		})
	s.AddTool(mcp.NewTool("ask_sampling", mcp.WithDescription("asks the client to sample, returns its answer as JSON")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sreq := mcp.CreateMessageRequest{}
			sreq.Messages = []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("what is 2+2?")}}
			sreq.MaxTokens = 20
			sreq.SystemPrompt = "be brief"
			res, err := server.ServerFromContext(ctx).RequestSampling(ctx, sreq)
			return answer(res, err)
		})
	s.AddTool(mcp.NewTool("ask_elicitation", mcp.WithDescription("asks the client for input (form, or url mode), returns its answer as JSON"), mcp.WithString("mode")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ereq := mcp.ElicitationRequest{}
			ereq.Params.Message = "your name?"
			if req.GetString("mode", "") == "url" {
				ereq.Params.Mode = mcp.ElicitationModeURL
				ereq.Params.URL = "https://example.com/consent"
				ereq.Params.ElicitationID = "el-1"
			} else {
				ereq.Params.RequestedSchema = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
			}
			srv := server.ServerFromContext(ctx)
			res, err := srv.RequestElicitation(ctx, ereq)
			if err == nil && ereq.Params.Mode == mcp.ElicitationModeURL {
				// The out-of-band interaction is over at once.
				_ = srv.SendElicitationComplete(ctx, server.ClientSessionFromContext(ctx), ereq.Params.ElicitationID)
				flush()
			}
			return answer(res, err)
		})
	s.AddTool(mcp.NewTool("client_caps", mcp.WithDescription("returns the capabilities its client declared at initialize, as JSON")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			info, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
			if !ok {
				return mcp.NewToolResultError("the session keeps no client info"), nil
			}
			return answer(info.GetClientCapabilities(), nil)
		})
	s.AddTool(mcp.NewTool("ask_roots", mcp.WithDescription("asks the client for its roots, returns them as JSON")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
			return answer(res, err)
		})
	s.AddTool(mcp.NewTool("log", mcp.WithDescription("sends one log message at each level, then answers")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			srv := server.ServerFromContext(ctx)
			for _, l := range []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelWarning, mcp.LoggingLevelError} {
				// SendLogMessageToClient drops what is below the level the
				// client (here: the proxy) set with logging/setLevel.
				_ = srv.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(l, "testupstream", "message at "+string(l)))
			}
			flush()
			return mcp.NewToolResultText("logged"), nil
		})
	s.AddTool(mcp.NewTool("block", mcp.WithDescription("waits until cancelled, counting cancellations")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	s.AddTool(mcp.NewTool("cancelled", mcp.WithDescription("how many block calls were cancelled")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(cancelled.Load())), nil
		})
	s.AddNotificationHandler(mcp.MethodNotificationRootsListChanged, func(ctx context.Context, n mcp.JSONRPCNotification) {
		rootsChanged.Add(1)
	})
	s.AddTool(mcp.NewTool("roots_changed", mcp.WithDescription("how many notifications/roots/list_changed arrived")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(rootsChanged.Load())), nil
		})
	s.AddTool(mcp.NewTool("drop_templates", mcp.WithDescription("removes every resource template")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			go server.ServerFromContext(ctx).SetResourceTemplates()
			return mcp.NewToolResultText("dropping templates"), nil
		})
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("never answers, even when cancelled")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {}
		})
	s.AddTool(mcp.NewTool("touch", mcp.WithDescription("says a resource was updated"), mcp.WithString("uri", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			server.ServerFromContext(ctx).SendNotificationToAllClients("notifications/resources/updated", map[string]any{"uri": req.GetString("uri", "")})
			flush()
			return mcp.NewToolResultText("touched"), nil
		})
	s.AddTool(mcp.NewTool("add_prompt", mcp.WithDescription("adds a prompt named name"), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := req.GetString("name", "")
			go server.ServerFromContext(ctx).AddPrompt(mcp.NewPrompt(name, mcp.WithPromptDescription("added at run time")),
				func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return mcp.NewGetPromptResult("late", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello from "+name))}), nil
				})
			return mcp.NewToolResultText("adding " + name), nil
		})
	// A second page of tools: more than PageSize in all.
	for i := 0; i < PageSize; i++ {
		name := fmt.Sprintf("page_tool_%d", i)
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("one of many")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(name), nil
			})
	}

	s.AddResource(mcp.NewResource(TextURI, "text", mcp.WithResourceDescription("a text resource"), mcp.WithMIMEType("text/plain")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody}}, nil
		})
	s.AddResource(mcp.NewResource(BlobURI, "blob", mcp.WithResourceDescription("a binary resource"), mcp.WithMIMEType("application/octet-stream")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: BlobURI, MIMEType: "application/octet-stream", Blob: BlobBase64}}, nil
		})
	// More resources than a page.
	for i := 0; i < PageSize+2; i++ {
		uri := fmt.Sprintf("test://many/%02d", i)
		s.AddResource(mcp.NewResource(uri, fmt.Sprintf("many-%02d", i)),
			func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, Text: uri}}, nil
			})
	}
	s.AddResourceTemplate(mcp.NewResourceTemplate(ItemTemplate, "item", mcp.WithTemplateDescription("an item by id"), mcp.WithTemplateMIMEType("application/json")),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			id := strings.TrimPrefix(req.Params.URI, "test://items/")
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: `{"id":"` + id + `"}`}}, nil
		})

	s.AddPrompt(mcp.NewPrompt(PromptName, mcp.WithPromptDescription("greets someone"),
		mcp.WithArgument("name", mcp.ArgumentDescription("who"), mcp.RequiredArgument()),
		mcp.WithArgument("style", mcp.ArgumentDescription("formal or casual"))),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			name := req.Params.Arguments["name"]
			if name == "" {
				return nil, fmt.Errorf("argument name is required")
			}
			return mcp.NewGetPromptResult("a greeting", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Greet "+name+" in a "+req.Params.Arguments["style"]+" style.")),
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewImageContent(ImageBase64, "image/png")),
				mcp.NewPromptMessage(mcp.RoleAssistant, mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: TextURI, MIMEType: "text/plain", Text: TextBody})),
			}), nil
		})
}

// answer returns a client's answer as the tool's JSON text, or its error
// as a tool error.
func answer(res any, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return mcp.NewToolResultError("client error: " + err.Error()), nil
	}
	b, _ := json.Marshal(res)
	return mcp.NewToolResultText(string(b)), nil
}

func ptr[T any](v T) *T { return &v }
