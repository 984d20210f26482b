package testupstream

import (
	"context"
	"encoding/json"
	"math/rand/v2"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// LeakyMode is the [EnvMode] of an upstream that plants credentials in
// every kind of message it can send a client: the listings (a tool's
// description and a parameter's, a resource's and a prompt's), a
// JSON-RPC error's message and data, progress and log notifications, an
// elicitation's and a sampling request's params, a result whose token is
// cut across two text items, a resource read and a prompt. [Leaked] are
// the secrets: none may reach a client through a proxy that masks.
const LeakyMode = "leaky"

// Leaked are the leaky upstream's secrets (the same in the upstream's
// process and the test's: a fixed seed), by what carries them.
var Leaked = func() map[string]string {
	r := rand.New(rand.NewPCG(52, 53))
	out := map[string]string{}
	for _, c := range []struct{ where, kind string }{
		{"tool description", "github-pat"}, {"parameter description", "aws-access-token"},
		{"resource description", "slack-bot-token"}, {"prompt description", "github-oauth"},
		{"error message", "github-pat"}, {"error data", "jwt"},
		{"progress message", "github-app-token"}, {"log message", "aws-access-token"},
		{"elicitation message", "github-pat"}, {"sampling message", "slack-user-token"},
		{"split result", "github-pat"}, {"resource text", "jwt"}, {"prompt text", "github-pat"},
	} {
		out[c.where] = testsecrets.Plant(r, c.kind).Secret
	}
	return out
}()

// Leaky builds the leaky upstream.
func Leaky() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "leaky", Version: "1.0.0"}, &mcp.ServerOptions{})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"q": map[string]any{"type": "string", "description": "a query; the key is " + Leaked["parameter description"]},
	}}
	s.AddTool(&mcp.Tool{Name: "leak_listing", Description: "uses GITHUB_TOKEN=" + Leaked["tool description"], InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	s.AddTool(tool("leak_error", "fails with a JSON-RPC error"),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			data, _ := json.Marshal(map[string]string{"token": Leaked["error data"]})
			return nil, &jsonrpc.Error{Code: -32001, Message: "backend refused token " + Leaked["error message"], Data: data}
		})
	s.AddTool(tool("leak_progress", "reports progress with a secret in its message"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "using installation token " + Leaked["progress message"]})
			}
			return text("ok"), nil
		})
	s.AddTool(tool("leak_log", "logs a secret"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "leaky", Data: "aws_access_key_id = " + Leaked["log message"]})
			return text("ok"), nil
		})
	s.AddTool(tool("leak_elicit", "asks the client with a secret in its question"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "confirm the token " + Leaked["elicitation message"]})
			if err != nil {
				return toolError("elicit: " + err.Error()), nil
			}
			b, _ := json.Marshal(res)
			return text(string(b)), nil
		})
	s.AddTool(tool("leak_sample", "asks the client's model with a secret in the prompt"),
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarize: SLACK_TOKEN=" + Leaked["sampling message"]}}}})
			if err != nil {
				return toolError("sample: " + err.Error()), nil
			}
			return text("sampled"), nil
		})
	s.AddTool(tool("leak_split", "returns a token cut across two text items"),
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := Leaked["split result"]
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "token: " + tok[:12]}, &mcp.TextContent{Text: tok[12:] + " (end)"}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "leak://config", Name: "config", Description: "slack " + Leaked["resource description"], MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "leak://config", MIMEType: "text/plain", Text: "session=" + Leaked["resource text"]}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "leak_prompt", Description: "oauth: " + Leaked["prompt description"]},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "GITHUB_TOKEN=" + Leaked["prompt text"]}}}}, nil
		})
	// Big ones, to be diverted.
	s.AddResource(&mcp.Resource{URI: "leak://big", Name: "big", Description: "a big listing", MIMEType: "application/json"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "leak://big", MIMEType: "application/json", Text: string(Listing(300))}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "big_prompt", Description: "a long prompt"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "long", Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: Words(5000)}}}}, nil
		})
	return s
}
