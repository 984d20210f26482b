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
// Input schemas are JSON Schema objects. [Object] builds the common case
// from [Property] values ([String], [Integer], [Boolean]), encoded as
// encoding/json encodes maps: keys sorted, so a definition's bytes are
// stable and snapshot tests can pin them.
//
// A schema is also the one declaration its handler's arguments are
// checked by: [Checked] runs [Schema.Check] before the handler, which
// enforces types, enums, minimum, maximum, maxLength (in characters) and
// maxItems, refuses arguments the schema does not declare (unless its
// additionalProperties allows them) and any that differ from a declared
// name only in case, and hands the handler the checked object
// re-encoded, so that what it decodes is exactly what was checked.
//
//	def := tool.Def{
//		Name:        "head",
//		Description: "First lines of a stored output.",
//		InputSchema: tool.Object(
//			tool.String("file", "A stored output's name.", tool.Required()),
//			tool.Integer("lines", "How many lines.", tool.Min(1), tool.Default(50))),
//		Annotations: tool.ReadOnly(),
//		Handler:     func(ctx context.Context, args json.RawMessage) tool.Result { … },
//	}
package tool
