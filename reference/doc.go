// Package reference resolves outputs by reference: a stored output, or
// part of it, handed to another tool without entering the model's
// context. Anywhere in a tool call's arguments, an object that is exactly
//
//	{"$scratchpad": {"file": NAME, "path": "$.items[?@.failed]", "lines": "A-B", "as": "text"|"json"}}
//
// (only file required; path or lines, not both) is replaced, before the
// call is sent, by the calling agent's stored output NAME — the name its
// pointer gives, as the exploration tools take it — or by the value the
// path (RFC 9535 JSONPath, or the dotted shorthand) selects, or by those
// lines. "json" puts the JSON value in place (a whole JSON file, the
// records of an NDJSON file or the rows of a CSV file as an array, a
// path's value, a path's node list as an array); "text" puts a string:
// the stored text as it is, byte for byte, the text of a string value, or
// another value serialized as indented JSON. Without "as", a parameter
// whose input schema takes only a string (and lines) gets text, any other
// the JSON value (a text file's whole text as a string).
//
// # Basics
//
// [Resolve] takes a call's raw arguments, the agent's [Env] and the
// tool's [Schema] (from its listed inputSchema, kept per schema by
// [Schemas]) and returns the arguments to send ([Resolved]): several
// references in one call, references inside arrays and nested objects;
// the result is checked against the input schema before anything is
// sent. Files are read only through the agent's read root (an os.Root:
// another owner's or another run's file, an absolute path, a ".." or a
// link out of it is refused) and selected with package explore's RFC
// 9535 evaluation ([explore.Take]), so a reference reaches exactly the
// files and values the exploration tools do.
//
// At the top of the arguments, a "$scratchpad" member holds the call's
// own [Options] ({"store": true}: store the result whatever its size)
// and is taken out before the call is sent.
//
// # Errors
//
// Every problem is found before anything is sent, and is an [*Error]:
// one JSON object ([Error.JSON]) naming the reference and its place (a
// JSON Pointer), what went wrong, what there is instead (the agent's
// stored outputs most like a file that is not there; the exploration
// tools' answer for a path that selects nothing, with its ready-to-run
// suggestions) and, for arguments the schema refuses, every problem and
// what to change ("as": "text"). Each matches one sentinel error:
// [ErrInvalid], [ErrNotFound], [ErrOutside], [ErrNothingSelected],
// [ErrTooLarge], [ErrDoesNotFit], [ErrUnresolved].
//
// # Bounds and secrets
//
// The bytes one call's references take, all together, are bounded by
// [Env].MaxBytes (default [DefaultMaxBytes], 64 MiB): a whole file over
// it is refused from its size, unread. What is put in is masked by
// [Env].Redactor (credentials, as redaction masks results) unless the
// call keeps secrets ([Call].KeepSecrets: the operator allowed them for
// the target server). [Resolved] says what was put in: its bytes, its
// tokens (what typing it out would have cost the model: never charged to
// its budget), the files named and the credentials masked, so that usage,
// telemetry and the audit line can count it without holding it.
package reference
