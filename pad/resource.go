package pad

import (
	"context"
	"errors"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Resource is the pad of the calling session as the resource
// [ResourceURI], rendered as Markdown. Subscriptions to it are the
// server's to track, with a [Watcher].
func Resource(padFor PadFunc) tool.Resource {
	return tool.Resource{
		URI:         ResourceURI,
		Name:        "scratchpad",
		Description: "The working-memory scratchpad of this agent or run, rendered as Markdown. Subscribe to be told when it changes.",
		MIMEType:    resourceMIME,
		Read:        func(ctx context.Context) (string, error) { return render(ctx, padFor) },
	}
}

// Prompt is the prompt [PromptName]: the calling session's pad, rendered
// as Markdown, as one user message.
func Prompt(padFor PadFunc) tool.Prompt {
	return tool.Prompt{
		Name:        PromptName,
		Description: "The current scratchpad, to put in front of the model each turn.",
		Get: func(ctx context.Context) (string, string, error) {
			text, err := render(ctx, padFor)
			return "The current scratchpad", text, err
		},
	}
}

func render(ctx context.Context, padFor PadFunc) (string, error) {
	p, err := padFor(ctx)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", errors.New("pad: no scratchpad for this session")
	}
	return p.ReadWith(ReadOptions{Format: RenderMarkdown})
}
