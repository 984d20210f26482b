package explore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
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

// The argument descriptions are shared wording, short because every
// tool listing repeats them (issue 28): what a model needs to call the
// tool right, no more. No <, > or & in them: JSON encoders such as go-sdk's
// send those as \u003c, \u003e and \u0026, several tokens each.
const fileDesc = "A pointer's file name, or a path under the read root."

const pathDesc = `JSON path, e.g. $.items[3].name; NDJSON/CSV files are arrays of records.`

// The largest arguments, stated in the schemas (models read them) and
// enforced from there by argReader (for the explore subcommand and any
// caller that skipped the schema too). Each is what a real call needs,
// with headroom; none is what bounds a call's work or memory: the code
// bounds those by the file and the per-call cap whatever the argument
// (grep walks only the context lines it shows; fields are parsed in
// linear time, at most maxFields of them).
const (
	// maxPosition bounds a line number (slice's start and end) and an
	// item offset and window (offset, limit): numbers past 10^9 mean a
	// file of more than a gigabyte of empty lines or of two-byte items.
	// limit gets it too, so that the "limit: 1000000" models write to
	// mean "all of it" keeps working.
	maxPosition = 1_000_000_000
	// maxWindow bounds how many lines or groups one answer asks for
	// (head's lines, count_by's top): the default per-call cap of 10,000
	// tokens holds about 5,000 numbered lines; 100,000 is twenty times
	// that, for caps configured far past the default.
	maxWindow = 100_000
	// maxMatches bounds grep's max_matches, the hits it keeps of a file
	// (of each of the 50 it shows without a file: 24 bytes a hit, 12 MB
	// at most): about 2,000 matching lines fit the default per-call cap,
	// and the footer counts every match whatever the bound.
	maxMatches = 10_000
	// maxContext bounds grep's context lines on each side of a match:
	// 2,001 lines around one match are past the default per-call cap
	// already; slice reads longer stretches.
	maxContext = 1000
	// maxDepthArg bounds schema's max_depth: JSON's own nesting bound
	// (jsonscan.MaxDepth), so that no depth that ever worked is refused;
	// depths past maxSchemaDepth are shown as that.
	maxDepthArg = jsonscan.MaxDepth
	// maxPathChars bounds a file name (PATH_MAX, 4096 on Linux), a JSON
	// path, a filter, and a field list (fields, sort_by, group_by,
	// distinct: each field is a path relative to an item), the bound
	// their parsers have always had in bytes (maxPathLen,
	// maxFilterLen).
	maxPathChars = 4096
)

func fileArg() tool.Property {
	return tool.String("file", fileDesc, tool.Required(), tool.MaxLength(maxPathChars))
}

func pathArg() tool.Property {
	return tool.String("path", pathDesc, tool.Required(), tool.MaxLength(maxPathChars))
}

const filterDesc = `JSONPath filter per item, e.g. ?(@.phase == 'Failed' || @.msg =~ /oom/i).`

func filterArg() tool.Property {
	return tool.String("filter", filterDesc, tool.MaxLength(maxPathChars))
}

func offsetArg() tool.Property {
	return tool.Integer("offset", "Window start, 0-based.", tool.Min(0), tool.Max(maxPosition))
}

func limitArg() tool.Property {
	return tool.Integer("limit", "", tool.Min(0), tool.Max(maxPosition)) // absent: the whole rest
}

// fieldArg is a field list or one field (fields, sort_by, group_by,
// distinct).
func fieldArg(name, desc string, opts ...tool.Option) tool.Property {
	return tool.String(name, desc, append(opts, tool.MaxLength(maxPathChars))...)
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
			tool.Integer("lines", "", tool.Default(50), tool.Min(1), tool.Max(maxWindow)))},
	{Name: ToolSlice,
		Description: "Lines start..end of a stored output, numbered (1-based, both inclusive).",
		InputSchema: tool.Object(fileArg(),
			tool.Integer("start", "", tool.Required(), tool.Min(1), tool.Max(maxPosition)),
			tool.Integer("end", "", tool.Required(), tool.Min(1), tool.Max(maxPosition)))},
	{Name: ToolGrep,
		Description: "Lines matching an RE2 regex (an invalid one is searched as literal text), with context; the footer counts all matches. Without file: every stored output's match count and first max_matches lines (default 3).",
		InputSchema: tool.Object(tool.String("file", fileDesc, tool.MaxLength(maxPathChars)),
			tool.String("pattern", "", tool.Required(), tool.MaxLength(MaxPatternBytes)),
			tool.Integer("context", "Lines around each match.", tool.Default(3), tool.Min(0), tool.Max(maxContext)),
			tool.Boolean("ignore_case", "", tool.Default(false)),
			tool.Integer("max_matches", "", tool.Default(20), tool.Min(1), tool.Max(maxMatches)))},
	{Name: ToolSchema,
		Description: "Shape of a stored output, not its content: JSON key tree with types, array lengths and line ranges; NDJSON record keys; Markdown headings; CSV/TSV columns; text line shapes.",
		InputSchema: tool.Object(fileArg(),
			tool.Integer("max_depth", "", tool.Default(4), tool.Min(1), tool.Max(maxDepthArg)))},
	{Name: ToolItemSchema,
		Description: "Every key of the items of the array at path (nested keys dotted), its types and how many items have it. Windowed by item.",
		InputSchema: tool.Object(fileArg(), pathArg(), offsetArg(), limitArg())},
	{Name: ToolGetIn,
		Description: "The value at path as JSON. offset/limit window an array's items, an object's keys or a string's lines (printed raw); filter keeps the matching items.",
		InputSchema: tool.Object(fileArg(), pathArg(), offsetArg(), limitArg(), filterArg())},
	{Name: ToolIterateOver,
		Description: "Rows of chosen fields of each item of the array at path, with its _index; windowed after filter and sort.",
		InputSchema: tool.Object(fileArg(), pathArg(),
			fieldArg("fields", `Comma-separated, e.g. "id,title,meta.author"; a[*].b gives an array.`, tool.Required()),
			offsetArg(), limitArg(), filterArg(),
			fieldArg("sort_by", ""),
			tool.String("order", "", tool.Enum("asc", "desc")))},
	{Name: ToolCountBy,
		Description: "Count the items of the array at path (after filter) by group_by, biggest first, or a field's distinct values; numbers get min/max/sum/mean/p50/p95. A filter alone counts matches.",
		InputSchema: tool.Object(fileArg(),
			tool.String("path", pathDesc, tool.MaxLength(maxPathChars)),
			tool.String("pattern", `For a text file, instead of path: RE2 regex; lines are counted by its first group, e.g. "service=(\w+)".`, tool.MaxLength(MaxPatternBytes)),
			fieldArg("group_by", `Comma-separated fields, e.g. "ns,status.phase"; a[*] counts each element.`),
			fieldArg("distinct", "Field whose distinct values are counted (per group)."),
			filterArg(),
			tool.Integer("top", "Groups shown; the rest are summed as other.", tool.Default(defaultTop), tool.Min(1), tool.Max(maxWindow)))},
	{Name: ToolRead,
		Description: "The whole stored output, if it fits the per-call cap and your context budget.",
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
		// Arguments past their bounds or undeclared are answered before
		// a slot is taken: a flood of refused calls must not make the
		// agent's or its owner's good calls busy.
		if res := precheck(name, args); res != nil {
			return *res
		}
		release, full := env.acquire()
		switch {
		case full == nil:
		case full == env.Slots:
			return *errorResult("busy", fmt.Sprintf("this agent already has %d exploration calls running, the most it may run at once; retry once one of them has answered.", cap(env.Slots)))
		default:
			return *errorResult("busy", fmt.Sprintf("this agent's owner already has %d exploration calls running, all its agents together, the most it may run at once; retry once one of them has answered.", cap(env.OwnerSlots)))
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
