package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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

// The argument descriptions are shared wording, short because every
// tool listing repeats them (issue 28): what a model needs to call the
// tool right, no more. No <, > or & in them: JSON encoders such as go-sdk's
// send those as \u003c, \u003e and \u0026, several tokens each.
const fileDesc = "A pointer's file name, or a path under the read root."

const pathDesc = `JSONPath, e.g. $.items[3].name or $..[?@.id]; NDJSON/CSV files are arrays of records.`

const filterDesc = `JSONPath filter per item, e.g. ?(@.phase == 'Failed' || search(@.msg, 'oom')).`

// The largest arguments, stated in the schemas (models read them) and
// enforced from there by the validator, for the explore subcommand too. Each is what a real call needs,
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

// explorers are the tools in the order [Tools] returns them, each with
// the one declaration of its arguments (args.go).
var explorers = []explorer{
	declare(ToolHead, "First lines of a stored output, numbered. Start here for text; use schema first for JSON.", runHead),
	declare(ToolSlice, "Lines start..end of a stored output, numbered (1-based, both inclusive).", runSlice),
	declare(ToolGrep, "Lines matching an RE2 regex (an invalid one is searched as literal text), with context; the footer counts all matches. Without file: every stored output's match count and first max_matches lines (default 3).", runGrep),
	declare(ToolSchema, "Shape of a stored output, not its content: JSON key tree with types, array lengths and line ranges; NDJSON record keys; Markdown headings; CSV/TSV columns; text line shapes.", runSchema),
	declare(ToolItemSchema, "Every key of the items of the array at path (nested keys dotted), its types and how many items have it. Windowed by item.", runItemSchema),
	declare(ToolGetIn, "The value at path as JSON (their list, if it selects several). offset/limit window an array's items, an object's keys or a string's lines (printed raw); filter keeps the matching items.", runGetIn),
	declare(ToolIterateOver, "Rows of chosen fields of each item of the array at path, with its _index (_path for a path's nodes); windowed after filter and sort.", runIterateOver),
	declare(ToolCountBy, "Count the items of the array at path (after filter) by group_by, biggest first, or a field's distinct values; numbers get min/max/sum/mean/p50/p95. A filter alone counts matches.", runCountBy),
	declare(ToolRead, `The whole stored output, if it fits the per-call cap and your context budget. To hand it, or a path of it, to another tool unread: that argument = {"$scratchpad":{"file":F,"path":P}}.`, runRead),
}

// byName are the explorers by tool name.
var byName = func() map[string]*explorer {
	m := map[string]*explorer{}
	for i := range explorers {
		m[explorers[i].def.Name] = &explorers[i]
	}
	return m
}()

// definitions are the tools without handlers.
var definitions = func() []tool.Def {
	defs := make([]tool.Def, len(explorers))
	for i, e := range explorers {
		defs[i] = e.def
	}
	return defs
}()

// handler adapts an explorer to a [tool.Handler]: the arguments are
// validated and decoded once, before a call slot is taken (a flood of
// refused calls must not make the agent's or its owner's good calls busy).
func handler(name string, envFor func(ctx context.Context) (*Env, error)) tool.Handler {
	e := byName[name]
	return func(ctx context.Context, raw json.RawMessage) tool.Result {
		env, err := envFor(ctx)
		if err != nil {
			return tool.Error(err.Error())
		}
		run, file, problems := e.decode(raw)
		if len(problems) > 0 {
			return *refused(name, problems)
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
		return runCall(ctx, env, name, file, run)
	}
}

// Call runs one exploration tool. Problems the model can act on (bad
// arguments, missing paths, results too large) come back as a successful
// result holding one JSON object {"error": code, "message": …,
// "suggestions": […]}. args are as JSON decodes them, or strings (the
// explore subcommand's key=value arguments, read as the integers and
// booleans the tool declares), validated as a model's call is.
func Call(ctx context.Context, env *Env, name string, args map[string]any) tool.Result {
	e, ok := byName[name]
	if !ok {
		return *errorResult("unknown_tool", fmt.Sprintf("no exploration tool %q; the tools are head, slice, grep, schema, item_schema, get_in, iterate_over, count_by, read.", name))
	}
	run, file, problems := e.decodeValue(coerce(e.types, args))
	if len(problems) > 0 {
		return *refused(name, problems)
	}
	return runCall(ctx, env, name, file, run)
}

// runCall runs a decoded call.
func runCall(ctx context.Context, env *Env, name, file string, run func(*call) *tool.Result) (res tool.Result) {
	defer func() {
		if r := recover(); r != nil {
			// A bug must not take down a server shared by many agents.
			res = *errorResult("internal_error", fmt.Sprintf("%s failed unexpectedly: %v", name, r))
		}
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	c := &call{ctx: ctx, env: env, tool: name, file: file}
	return *run(c)
}

// argErr returns the invalid_arguments result of the problems a handler
// found between its arguments (the schema checked each), or nil.
func (c *call) argErr() *tool.Result {
	if len(c.errs) > 0 {
		return errorResult("invalid_arguments", strings.Join(c.errs, "; ")+".")
	}
	return nil
}
