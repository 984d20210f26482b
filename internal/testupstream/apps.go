package testupstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AppsMode is the [EnvMode] of a small MCP Apps server, shaped as
// @modelcontextprotocol/server-system-monitor lists its tools: a tool
// with a page (disk_usage, _meta.ui.resourceUri), the page's own
// app-only tool (disk_poll, _meta.ui.visibility ["app"]) and a plain one
// (disk_list). All three are about disks, so one search finds them.
const AppsMode = "apps"

// Apps builds the [AppsMode] server.
func Apps() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "apps", Version: "1.0.0"}, nil)
	ok := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil }
	page := tool("disk_usage", "Show disk usage of every mounted disk in an interactive page")
	page.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://apps/disk.html"}}
	s.AddTool(page, ok)
	poll := tool("disk_poll", "Poll disk usage counters of every mounted disk for the page")
	poll.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": "ui://apps/disk.html", "visibility": []string{"app"}}}
	s.AddTool(poll, ok)
	s.AddTool(tool("disk_list", "List every mounted disk"), ok)
	return s
}
