// Package tool describes what this server offers a model — tools, a
// resource, a prompt — without naming any MCP library, so the domain
// packages (explore, artifacts, pad) stay independent of the library the
// server speaks MCP with.
//
// A domain package returns [Def] values; the server's adapter registers
// them on its MCP library, decoding nothing: a [Handler] receives the
// call's arguments as raw JSON and returns one [Result]. A [Resource] and
// a [Prompt] are registered the same way.
//
// A tool's arguments are declared once, as a struct: [Args] generates
// the input schema from it with google/jsonschema-go (as go-sdk's
// AddTool[In] does; bounds, defaults and enums from arg tags), validates
// a call's arguments against that schema with santhosh-tekuri/jsonschema
// ([Args.Decode]: every keyword, inside array items and their objects
// too, every problem at once, each a [Problem] naming where and which
// keyword), refuses undeclared arguments and case variants of declared
// ones (encoding/json would decode those as the declared one), and
// decodes them into the struct. [Handle] wraps a handler of the struct.
//
// The validator is the judge, but not every call waits for it: it reads
// every number as an exact big.Rat (through fmt.Sprint), which cost more
// than a warm exploration call's own work. A quick check compiled from
// the same schema proves the usual call valid (the keywords generated
// here; integers compared as int64) and sends everything else — a
// keyword it does not know, a number it cannot compare exactly, any
// value it would refuse — to the validator, which says every problem.
// What the quick check accepts, the validator accepts
// (FuzzQuickImpliesValidator). A validated call is then written into the
// struct directly where its fields' decoding is known exactly (strings,
// numbers, booleans, pointers, slices, structs; FuzzAssignIsEncodingJSON),
// by encoding/json otherwise (raw JSON, any). Numbers no argument can take
// (beyond float64, exponents past ±400, over 64 characters) are refused
// before the validator reads them: each would cost it tens of
// milliseconds.
// Schemas are encoded with keys sorted, so a definition's bytes are
// stable and snapshot tests pin them.
//
//	type headArgs struct {
//		File  string `json:"file" jsonschema:"A stored output's name." arg:"maxLength=4096"`
//		Lines int    `json:"lines,omitempty" arg:"default=50,minimum=1,maximum=$maxLines"`
//	}
//	args := tool.MustArgs[headArgs](tool.ArgsOptions{Vars: map[string]any{"maxLines": 100_000}})
//	def := tool.Def{
//		Name:        "head",
//		Description: "First lines of a stored output.",
//		InputSchema: args.Schema(),
//		Annotations: tool.ReadOnly(),
//		Handler:     tool.Handle(args, refused, func(ctx context.Context, a headArgs, _ json.RawMessage) tool.Result { … }),
//	}
//
// [Object] builds a schema by hand, for tools declared elsewhere (tests).
package tool
