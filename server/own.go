package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// toolOf is the go-sdk definition of one of the server's own tools; its
// schema is sent as written.
func toolOf(d tool.Def) *mcp.Tool {
	t := &mcp.Tool{Name: d.Name, Title: d.Title, Description: d.Description, InputSchema: d.InputSchema, Meta: d.Meta}
	if len(d.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	a := d.Annotations
	if a.ReadOnly != nil || a.Destructive != nil || a.Idempotent != nil || a.OpenWorld != nil {
		t.Annotations = &mcp.ToolAnnotations{DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
		if a.ReadOnly != nil {
			t.Annotations.ReadOnlyHint = *a.ReadOnly
		}
		if a.Idempotent != nil {
			t.Annotations.IdempotentHint = *a.Idempotent
		}
	}
	return t
}

// bounded is ctx ended at the time bound of one call of the server's
// own (none when bound is negative).
func bounded(ctx context.Context, bound time.Duration) (context.Context, context.CancelFunc) {
	if bound < 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, bound, fmt.Errorf("%w (%s)", ErrCallTimeout, bound))
}

func ownToolHandler(d tool.Def, bound time.Duration) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		return runOwnTool(ctx, d, args, bound), nil
	}
}

// runOwnTool runs one of the server's own tools within its time bound,
// for either era: a panic is the call's error, not the server's end.
func runOwnTool(ctx context.Context, d tool.Def, args json.RawMessage, bound time.Duration) (res *mcp.CallToolResult) {
	ctx, cancel := bounded(ctx, bound)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			res = toolError(fmt.Sprintf("%s failed unexpectedly: %v", d.Name, r))
		}
	}()
	out := d.Handler(ctx, args)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out.Text}}, IsError: out.IsError}
}

func ownResourceHandler(r tool.Resource, bound time.Duration) mcp.ResourceHandler {
	return func(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readOwnResource(ctx, r, bound)
	}
}

// readOwnResource reads one of the server's own resources within its
// time bound, for either era.
func readOwnResource(ctx context.Context, r tool.Resource, bound time.Duration) (*mcp.ReadResourceResult, error) {
	ctx, cancel := bounded(ctx, bound)
	defer cancel()
	text, err := r.Read(ctx)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.URI, MIMEType: r.MIMEType, Text: text}}}, nil
}

func ownPromptHandler(p tool.Prompt, bound time.Duration) mcp.PromptHandler {
	return func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return getOwnPrompt(ctx, p, bound)
	}
}

// getOwnPrompt gets one of the server's own prompts within its time
// bound, for either era.
func getOwnPrompt(ctx context.Context, p tool.Prompt, bound time.Duration) (*mcp.GetPromptResult, error) {
	ctx, cancel := bounded(ctx, bound)
	defer cancel()
	desc, text, err := p.Get(ctx)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &mcp.GetPromptResult{Description: desc, Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
}

// ownResource and ownPrompt are the go-sdk listing entries of the
// server's own resources and prompts.
func ownResource(r tool.Resource) *mcp.Resource {
	return &mcp.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}
}

func ownPrompt(p tool.Prompt) *mcp.Prompt {
	return &mcp.Prompt{Name: p.Name, Description: p.Description}
}

// rpcError is a client's answer to a forwarded request as the upstream
// gets it: the client's own JSON-RPC error, code and all, or an internal
// error.
func rpcError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &upstream.RPCError{Code: int(je.Code), Message: je.Message, Data: je.Data}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &upstream.RPCError{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

func invalidParams(err error) error {
	return &upstream.RPCError{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + err.Error()}
}
