package explore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
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
	ToolCountBy     = "count_by"
	ToolRead        = "read"
)

var handlers = map[string]func(*call) *tool.Result{
	ToolHead:        runHead,
	ToolSlice:       runSlice,
	ToolGrep:        runGrep,
	ToolSchema:      runSchema,
	ToolItemSchema:  runItemSchema,
	ToolGetIn:       runGetIn,
	ToolIterateOver: runIterateOver,
	ToolRead:        runRead,
	ToolCountBy:     runCountBy,
}

const fileDesc = "A stored output's name as given in the pointer (e.g. github-search_code-1a2b3c4d.json), or a relative path under the read root (e.g. ../artifacts/notes.md)."

const pathDesc = `JSON path: $.items[3].metadata.name or items.3.metadata.name; NDJSON files are arrays ($[0] is the first record), CSV/TSV files arrays of row objects keyed by the header; quote odd keys as $["a.b"]; "$" is the root.`

func fileArg() tool.Property {
	return tool.String("file", fileDesc, tool.Required())
}

func pathArg() tool.Property {
	return tool.String("path", pathDesc, tool.Required())
}

const filterDesc = `JSONPath filter on each item, e.g. ?(@.status.phase == 'Failed' && @.restarts > 3); also =~ /re/i, match(), search(), length(), count(), @.x in ['a','b'].`

func filterArg() tool.Property { return tool.String("filter", filterDesc) }

func offsetArg(unit string) tool.Property {
	return tool.Integer("offset", "First "+unit+" of the window, 0-based. Past the end gives an empty window.", tool.Min(0))
}

func limitArg(unit string) tool.Property {
	return tool.Integer("limit", "Number of "+unit+"s in the window. Omit offset and limit for all of them.", tool.Min(0))
}

// Tools returns the nine exploration tools, all read-only. Their names
// and argument names are the contract models learn; a snapshot test
// guards them. Each handler resolves the calling session's [Env] with
// envFor; an error there becomes an IsError result, since the model
// cannot fix it.
func Tools(envFor func(ctx context.Context) (*Env, error)) []tool.Def {
	defs := append([]tool.Def{}, definitions...)
	for i := range defs {
		defs[i].Annotations = tool.ReadOnly()
		defs[i].Handler = handler(defs[i].Name, envFor)
	}
	return defs
}

// definitions are the tools without handlers: their input schemas are the
// one declaration of every argument's type, default and whether it is
// required, which [argReader] reads them by.
var definitions = []tool.Def{
	{Name: ToolHead,
		Description: "First lines of a stored output, numbered. Start here for text; use schema first for JSON.",
		InputSchema: tool.Object(fileArg(),
			tool.Integer("lines", "How many lines (default 50).", tool.Default(50), tool.Min(1)))},
	{Name: ToolSlice,
		Description: "Lines start..end (both inclusive, 1-based) of a stored output, numbered.",
		InputSchema: tool.Object(fileArg(),
			tool.Integer("start", "First line, 1-based.", tool.Required(), tool.Min(1)),
			tool.Integer("end", "Last line, inclusive.", tool.Required(), tool.Min(1)))},
	{Name: ToolGrep,
		Description: "Lines matching a regular expression (RE2 syntax; an invalid regex is searched as literal text), marked with '>', with merged context regions. The footer gives the total number of matching lines. Omit file to search every stored output: per file, its matching-line count and first max_matches lines (default 3, no context).",
		InputSchema: tool.Object(tool.String("file", fileDesc+" Omit to search every stored output."),
			tool.String("pattern", "RE2 regular expression, at most 1024 bytes.", tool.Required(), tool.MaxLength(MaxPatternBytes)),
			tool.Integer("context", "Lines of context around each match (default 3).", tool.Default(3), tool.Min(0)),
			tool.Boolean("ignore_case", "Case-insensitive match.", tool.Default(false)),
			tool.Integer("max_matches", "Matching lines shown (default 20); all are counted.", tool.Default(20), tool.Min(1)))},
	{Name: ToolSchema,
		Description: "Shape of a stored output without its content. JSON: key tree with types, array lengths and line ranges; NDJSON: union of record keys; Markdown: heading tree with line ranges; CSV/TSV: columns with types; text: line count, longest lines, common line shapes.",
		InputSchema: tool.Object(fileArg(),
			tool.Integer("max_depth", "Levels of nesting shown (default 4).", tool.Default(4), tool.Min(1)))},
	{Name: ToolItemSchema,
		Description: "For the array at path: every key of its items (nested keys dotted), the types seen and in how many items each key is present. Windowed by item.",
		InputSchema: tool.Object(fileArg(), pathArg(), offsetArg("item"), limitArg("item"))},
	{Name: ToolGetIn,
		Description: "The value at path as pretty JSON. offset/limit window an array's items or an object's keys; a string value is printed raw and windowed by line. filter keeps the array items that match.",
		InputSchema: tool.Object(fileArg(), pathArg(), offsetArg("item, key, line or match"), limitArg("item, key, line or match"), filterArg())},
	{Name: ToolIterateOver,
		Description: `Rows of selected fields from each item of the array at path: a JSON array of {"_index": i, "<field>": value, ...}; missing fields are null; _index is the item's absolute position.`,
		InputSchema: tool.Object(fileArg(), pathArg(),
			tool.String("fields", `Comma-separated field paths inside each item, e.g. "id,title,meta.author"; spec.containers[*].image gives an array.`, tool.Required()),
			offsetArg("item (or match)"), limitArg("item (or match)"), filterArg(),
			tool.String("sort_by", "Field to order the items by (after filtering), e.g. status.startTime."),
			tool.String("order", "asc (default) or desc.", tool.Enum("asc", "desc")))},
	{Name: ToolCountBy,
		Description: `Count the items of the array at path by field values, after an optional filter: groups by count, top ones shown, the rest summed in "other". distinct counts a field's distinct values; numbers also get min/max/sum/mean/p50/p95. A filter alone counts matches; pattern counts a text file's lines.`,
		InputSchema: tool.Object(fileArg(),
			tool.String("path", pathDesc),
			tool.String("pattern", `Text file, instead of path: RE2 regex whose first group's text the matching lines are counted by, e.g. "service=(\w+)".`, tool.MaxLength(MaxPatternBytes)),
			tool.String("group_by", `Comma-separated fields, e.g. "status.phase" or "metadata.namespace,status.phase"; [*] counts each element.`),
			tool.String("distinct", `Field whose distinct values are counted (per group with group_by), e.g. "spec.containers[*].image".`),
			filterArg(),
			tool.Integer("top", "Groups shown (default 20); the rest are summed in other.", tool.Default(defaultTop), tool.Min(1)))},
	{Name: ToolRead,
		Description: "The whole stored output, only if it fits the per-call cap and the context budget (decided from its size before reading).",
		InputSchema: tool.Object(fileArg())},
}

// handler adapts [Call] to a [tool.Handler]: the arguments are decoded
// once, as JSON decodes them (numbers as float64), which argReader reads.
func handler(name string, envFor func(ctx context.Context) (*Env, error)) tool.Handler {
	return func(ctx context.Context, raw json.RawMessage) tool.Result {
		env, err := envFor(ctx)
		if err != nil {
			return tool.Error(err.Error())
		}
		var args map[string]any
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &args); err != nil {
				return *errorResult("invalid_arguments", "the arguments must be one JSON object.")
			}
		}
		release, ok := env.acquire()
		if !ok {
			return *errorResult("busy", fmt.Sprintf("this agent already has %d exploration calls running, the most it may run at once; retry once one of them has answered.", cap(env.Slots)))
		}
		defer release()
		return Call(ctx, env, name, args)
	}
}

// Call runs one exploration tool. Problems the model can act on (bad
// arguments, missing paths, results too large) come back as a successful
// result holding one JSON object {"error": code, "message": …,
// "suggestions": […]}. args are as JSON decodes them, or strings (the
// explore subcommand's key=value arguments).
func Call(ctx context.Context, env *Env, name string, args map[string]any) (res tool.Result) {
	defer func() {
		if r := recover(); r != nil {
			// A bug must not take down a server shared by many agents.
			res = *errorResult("internal_error", fmt.Sprintf("%s failed unexpectedly: %v", name, r))
		}
	}()
	h, ok := handlers[name]
	if !ok {
		return *errorResult("unknown_tool", fmt.Sprintf("no exploration tool %q; the tools are head, slice, grep, schema, item_schema, get_in, iterate_over, count_by, read.", name))
	}
	if args == nil {
		args = map[string]any{}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	c := &call{ctx: ctx, env: env, tool: name, args: newArgReader(args, specs[name])}
	c.file = c.args.str("file") // grep's is optional: without it grep searches them all
	return *h(c)
}

// argErr returns the invalid_arguments result once a handler has read all
// its arguments, or nil.
func (c *call) argErr() *tool.Result {
	if msg := c.args.check(); msg != "" {
		return errorResult("invalid_arguments", msg+".")
	}
	return nil
}
