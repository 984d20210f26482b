package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
)

// capabilities is what the server declares to a client, in either era
// (initialize's answer, server/discover's): its own tools, resources and
// prompts, and the union of what the upstreams behind px offer. The
// caller has waited (bounded) for upstreams still starting.
func capabilities(own *Own, px *proxy.Proxy) *mcp.ServerCapabilities {
	up := px.Capabilities()
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if up.Logging {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	if up.Completions {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
	if up.Prompts || len(own.Prompts) > 0 {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if up.Resources || len(own.Resources) > 0 {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: up.Subscribe || len(own.Resources) > 0}
	}
	if len(up.Extensions) > 0 {
		// Forwarded as the upstreams declared them (the tasks extension:
		// its requests are routed to the upstream a task lives on).
		caps.Extensions = map[string]any{}
		for id, v := range up.Extensions {
			caps.Extensions[id] = v
		}
	}
	return caps
}
