package wire

// Extension ids, as a client or server declares them in
// capabilities.extensions. The skills extension's id is with its methods
// ([ExtensionSkills]).
const (
	// ExtensionApps is MCP Apps (SEP-1865): tools that name a ui:// page
	// the host renders.
	ExtensionApps = "io.modelcontextprotocol/ui"
	// ExtensionTasks is the tasks extension.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
)

// AppMIMEType is an MCP App page's MIME type (ext-apps'
// RESOURCE_MIME_TYPE).
const AppMIMEType = "text/html;profile=mcp-app"
