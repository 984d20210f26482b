package explore

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names, in the order [Tools] returns them.
const (
	ToolHead        = "head"
	ToolSlice       = "slice"
	ToolGrep        = "grep"
	ToolSchema      = "schema"
	ToolItemSchema  = "item_schema"
	ToolGetIn       = "get_in"
	ToolIterateOver = "iterate_over"
	ToolRead        = "read"
)

var handlers = map[string]func(*call) *mcp.CallToolResult{
	ToolHead:        runHead,
	ToolSlice:       runSlice,
	ToolGrep:        runGrep,
	ToolSchema:      runSchema,
	ToolItemSchema:  runItemSchema,
	ToolGetIn:       runGetIn,
	ToolIterateOver: runIterateOver,
	ToolRead:        runRead,
}

const fileDesc = "A stored output's name as given in the pointer (e.g. github-search_code-1a2b3c4d.json), or a relative path under the read root (e.g. ../artifacts/notes.md)."

const pathDesc = `JSON path: $.items[3].metadata.name or items.3.metadata.name; NDJSON files are arrays ($[0] is the first record); quote odd keys as $["a.b"]; "$" is the root.`

func fileArg() mcp.ToolOption {
	return mcp.WithString("file", mcp.Required(), mcp.Description(fileDesc))
}

func offsetArg(unit string) mcp.ToolOption {
	return mcp.WithInteger("offset", mcp.Min(0), mcp.Description("First "+unit+" of the window, 0-based. Past the end gives an empty window."))
}

func limitArg(unit string) mcp.ToolOption {
	return mcp.WithInteger("limit", mcp.Min(0), mcp.Description("Number of "+unit+"s in the window. Omit offset and limit for all of them."))
}

func readOnly() mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}

// Tools returns the eight exploration tool definitions. Their names and
// argument names are the contract models learn; a snapshot test guards them.
func Tools() []mcp.Tool {
	tools := []mcp.Tool{
		mcp.NewTool(ToolHead,
			mcp.WithDescription("First lines of a stored output, numbered. Start here for text; use schema first for JSON."),
			fileArg(),
			mcp.WithInteger("lines", mcp.DefaultNumber(50), mcp.Min(1), mcp.Description("How many lines (default 50)."))),
		mcp.NewTool(ToolSlice,
			mcp.WithDescription("Lines start..end (both inclusive, 1-based) of a stored output, numbered."),
			fileArg(),
			mcp.WithInteger("start", mcp.Required(), mcp.Min(1), mcp.Description("First line, 1-based.")),
			mcp.WithInteger("end", mcp.Required(), mcp.Min(1), mcp.Description("Last line, inclusive."))),
		mcp.NewTool(ToolGrep,
			mcp.WithDescription("Lines matching a regular expression (RE2 syntax; an invalid regex is searched as literal text), marked with '>', with merged context regions. The footer gives the total number of matching lines."),
			fileArg(),
			mcp.WithString("pattern", mcp.Required(), mcp.MaxLength(MaxPatternBytes), mcp.Description("RE2 regular expression, at most 1024 bytes.")),
			mcp.WithInteger("context", mcp.DefaultNumber(3), mcp.Min(0), mcp.Description("Lines of context around each match (default 3).")),
			mcp.WithBoolean("ignore_case", mcp.DefaultBool(false), mcp.Description("Case-insensitive match.")),
			mcp.WithInteger("max_matches", mcp.DefaultNumber(20), mcp.Min(1), mcp.Description("Matching lines shown (default 20); all are counted."))),
		mcp.NewTool(ToolSchema,
			mcp.WithDescription("Shape of a stored output without its content. JSON: key tree with types, array lengths and line ranges; NDJSON: union of record keys; Markdown: heading tree with line ranges; CSV/TSV: columns with types; text: line count, longest lines, common line shapes."),
			fileArg(),
			mcp.WithInteger("max_depth", mcp.DefaultNumber(4), mcp.Min(1), mcp.Description("Levels of nesting shown (default 4)."))),
		mcp.NewTool(ToolItemSchema,
			mcp.WithDescription("For the array at path: every key of its items (nested keys dotted), the types seen and in how many items each key is present. Windowed by item."),
			fileArg(),
			mcp.WithString("path", mcp.Required(), mcp.Description(pathDesc)),
			offsetArg("item"), limitArg("item")),
		mcp.NewTool(ToolGetIn,
			mcp.WithDescription("The value at path as pretty JSON. offset/limit window an array's items or an object's keys; a string value is printed raw and windowed by line."),
			fileArg(),
			mcp.WithString("path", mcp.Required(), mcp.Description(pathDesc)),
			offsetArg("item, key or line"), limitArg("item, key or line")),
		mcp.NewTool(ToolIterateOver,
			mcp.WithDescription(`Rows of selected fields from each item of the array at path: a JSON array of {"_index": i, "<field>": value, ...}; missing fields are null; _index is the item's absolute position.`),
			fileArg(),
			mcp.WithString("path", mcp.Required(), mcp.Description(pathDesc)),
			mcp.WithString("fields", mcp.Required(), mcp.Description(`Comma-separated field paths inside each item, e.g. "id,title,meta.author".`)),
			offsetArg("item"), limitArg("item")),
		mcp.NewTool(ToolRead,
			mcp.WithDescription("The whole stored output, only if it fits the per-call cap and the context budget (decided from its size before reading)."),
			fileArg()),
	}
	for i := range tools {
		readOnly()(&tools[i])
	}
	return tools
}

// Call runs one exploration tool. Problems the model can act on (bad
// arguments, missing paths, results too large) come back as a successful
// result holding one JSON object {"error": code, "message": …,
// "suggestions": […]}; the result is never nil.
func Call(ctx context.Context, env *Env, tool string, args map[string]any) (res *mcp.CallToolResult) {
	defer func() {
		if r := recover(); r != nil {
			// A bug must not take down a server shared by many agents.
			res = errorResult("internal_error", fmt.Sprintf("%s failed unexpectedly: %v", tool, r))
		}
	}()
	h, ok := handlers[tool]
	if !ok {
		return errorResult("unknown_tool", fmt.Sprintf("no exploration tool %q; the tools are head, slice, grep, schema, item_schema, get_in, iterate_over, read.", tool))
	}
	if args == nil {
		args = map[string]any{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	c := &call{ctx: ctx, env: env, tool: tool, args: newArgReader(args)}
	c.file = c.args.str("file", true)
	return h(c)
}

// argErr returns the invalid_arguments result once a handler has read all
// its arguments, or nil.
func (c *call) argErr() *mcp.CallToolResult {
	if msg := c.args.check(); msg != "" {
		return errorResult("invalid_arguments", msg+".")
	}
	return nil
}

// Register adds the eight tools to s. envFor resolves the calling session's
// Env; its error becomes a tool error result (IsError) since the model
// cannot fix it.
func Register(s *server.MCPServer, envFor func(ctx context.Context) (*Env, error)) {
	for _, t := range Tools() {
		name := t.Name
		s.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			env, err := envFor(ctx)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return Call(ctx, env, name, req.GetArguments()), nil
		})
	}
}
