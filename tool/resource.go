package tool

import "context"

// Resource is one readable resource with a fixed URI. Read renders it
// for the calling session.
type Resource struct {
	URI, Name, Description, MIMEType string
	Read                             func(ctx context.Context) (string, error)
	// Extension, when set, is the client extension the resource is for
	// (an MCP App's page): only a client that declared it is offered it.
	Extension string
}

// Prompt is a prompt without arguments. Get returns the result's
// description and the text of its one user message, for the calling
// session.
type Prompt struct {
	Name, Description string
	Get               func(ctx context.Context) (description, text string, err error)
}
