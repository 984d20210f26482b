package main

// Temporary: registers tool.Def/Resource/Prompt on mcp-go's server until
// the go-sdk adapter lands. Nothing outside this file turns the domain
// packages' neutral definitions into mcp-go types.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// mcpgoTools turns definitions into mcp-go server tools. The schema is
// passed raw, so clients see exactly the bytes the definition holds.
func mcpgoTools(defs []tool.Def) []server.ServerTool {
	out := make([]server.ServerTool, len(defs))
	for i, d := range defs {
		t := mcp.NewToolWithRawSchema(d.Name, d.Description, d.InputSchema)
		t.Title = d.Title
		t.Annotations = mcp.ToolAnnotation{
			ReadOnlyHint:    d.Annotations.ReadOnly,
			DestructiveHint: d.Annotations.Destructive,
			IdempotentHint:  d.Annotations.Idempotent,
			OpenWorldHint:   d.Annotations.OpenWorld,
		}
		h := d.Handler
		out[i] = server.ServerTool{Tool: t, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args, err := rawArguments(req)
			if err != nil {
				return mcp.NewToolResultError("scratchpad-mcp: arguments: " + err.Error()), nil
			}
			res := h(ctx, args)
			if res.IsError {
				return mcp.NewToolResultError(res.Text), nil
			}
			return mcp.NewToolResultText(res.Text), nil
		}}
	}
	return out
}

// rawArguments returns the call's arguments as the client sent them.
// Requests decoded from the wire keep their raw bytes; in-process ones
// (tests) only have the decoded value.
func rawArguments(req mcp.CallToolRequest) (json.RawMessage, error) {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments, nil
	}
	if req.Params.Arguments == nil {
		return nil, nil
	}
	return json.Marshal(req.Params.Arguments)
}

// addMCPGoResource registers r; its text is the one content item.
func addMCPGoResource(s *server.MCPServer, r tool.Resource) {
	s.AddResource(mcp.NewResource(r.URI, r.Name,
		mcp.WithResourceDescription(r.Description), mcp.WithMIMEType(r.MIMEType)),
		func(ctx context.Context, _ mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			text, err := r.Read(ctx)
			if err != nil {
				return nil, err
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.URI, MIMEType: r.MIMEType, Text: text}}, nil
		})
}

// addMCPGoPrompt registers p as a prompt of one user message.
func addMCPGoPrompt(s *server.MCPServer, p tool.Prompt) {
	s.AddPrompt(mcp.NewPrompt(p.Name, mcp.WithPromptDescription(p.Description)),
		func(ctx context.Context, _ mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			desc, text, err := p.Get(ctx)
			if err != nil {
				return nil, err
			}
			return mcp.NewGetPromptResult(desc,
				[]mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
		})
}

// mcpgoArtifactFilter hides from each session the tools [artifacts.Visible]
// does not let it see (write_artifact from non-coordinators). mcp-go
// applies filters to tools/call too, so a hidden tool cannot be called.
func mcpgoArtifactFilter(envFor artifacts.EnvFunc) server.ToolFilterFunc {
	return func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		env, err := envFor(ctx)
		if err != nil {
			env = nil
		}
		out := make([]mcp.Tool, 0, len(tools))
		for _, t := range tools {
			if artifacts.Visible(env, t.Name) {
				out = append(out, t)
			}
		}
		return out
	}
}

// addMCPGoPad registers the pad's tools, resource and prompt on s, with
// tool schemas fitted to opts, and tracks resources/subscribe through s's
// hooks (installing a Hooks value if s has none): mcp-go acknowledges
// the request but its sessions keep no subscription state. A
// pad.Watcher then sends notifications/resources/updated to each session
// subscribed to a pad that changed. Invalid options register nothing.
func addMCPGoPad(s *server.MCPServer, padFor pad.PadFunc, opts pad.Options) error {
	w := pad.NewWatcher()
	defs, err := pad.Tools(padFor, opts, w)
	if err != nil {
		return err
	}
	s.AddTools(mcpgoTools(defs)...)
	addMCPGoResource(s, pad.Resource(padFor))
	addMCPGoPrompt(s, pad.Prompt(padFor))

	h := s.GetHooks()
	if h == nil {
		h = &server.Hooks{}
		server.WithHooks(h)(s)
	}
	h.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		session := server.ClientSessionFromContext(ctx)
		if req.Params.URI != pad.ResourceURI || session == nil {
			return
		}
		p, err := padFor(ctx)
		if err != nil || p == nil {
			return
		}
		id := session.SessionID()
		w.Subscribe(id, p, func() {
			err := s.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": pad.ResourceURI})
			if errors.Is(err, server.ErrSessionNotFound) {
				w.Unsubscribe(id)
			}
		})
	})
	h.AddAfterUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
		if session := server.ClientSessionFromContext(ctx); session != nil && req.Params.URI == pad.ResourceURI {
			w.Unsubscribe(session.SessionID())
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, session server.ClientSession) {
		w.Unsubscribe(session.SessionID())
	})
	return nil
}
