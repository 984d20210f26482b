// Package explore implements the eight read-only exploration tools an agent
// uses on stored outputs: head, slice, grep, schema, item_schema, get_in,
// iterate_over and read. They pull exactly the slice the model needs out of
// a file that was too large to put in its context, never more than the
// per-call cap and never past the agent's context budget.
//
// # Basics
//
// [Tools] returns the tool definitions (all readOnlyHint) as [tool.Def]
// values, free of any MCP library, for the server to register; each
// handler resolves the session's [Env] through a callback. [Call] runs one
// tool directly; the explore subcommand of scratchpad-mcp uses it, so the
// shell sees exactly what the model sees.
//
//	env := &explore.Env{Root: root, Count: counter.CountString, Cache: explore.NewCache(512 << 20)}
//	res := explore.Call(ctx, env, "iterate_over", map[string]any{
//		"file": "github-search_code-1a2b3c4d.json", "path": "$.items",
//		"fields": "path,repository.full_name", "offset": 0, "limit": 20})
//
// Every successful result ends with one footer line stating what came back
// (windows are half-open: "items [3..7) of 120 total") and what is left:
//
//	--- iterate_over: $.items (items [0..20) of 120 total, fields: [path,repository.full_name]) | ~412 tokens, ~61,200 left of 102,400 ---
//
// The footer is counted too: [Env.Count] runs on the final text. If it is
// over [Env.MaxExtractionTokens] or does not fit [Env.Budget], the result is
// instead one JSON object {"error": "<tool>_too_large", "estimated_tokens",
// "per_call_limit" or "remaining_budget_tokens", "suggestions"} whose
// suggestions are complete calls, ready to run. Other problems the model can
// fix (key_path_not_found, invalid_path, not_json, invalid_json,
// not_an_array, invalid_range, invalid_arguments, file_not_found,
// file_outside_root, pattern_too_long, io_error, cancelled) have the same
// shape. They are successful tool results, not protocol errors, and are not
// charged.
//
// Paths are written $.items[3].metadata.name or items.3.metadata.name; keys
// that are not identifiers are quoted, $["a.b"]. An NDJSON file is an array
// of its records. Files are classified by extension (.json, .ndjson/.jsonl,
// .md, .csv, .tsv) and, for others such as .txt and .log, by content.
//
// # Speed
//
// A file is read once into memory with a line-offset index and kept in a
// [Cache] (an LRU with a byte budget shared by all agents, keyed so that a
// rewritten file is never served stale). JSON is validated with gjson and
// then walked as raw bytes by an iterative scanner; the member list of any
// container of 64 KiB or more is kept after first use, so item 400,000 of a
// 100 MB listing is a slice index away on the next call. grep searches the
// whole buffer with bytes.Index for the literal every match must contain and
// runs the regexp only on candidate lines.
//
// # Caveats
//
//   - All file access goes through [Env.Root] (an os.Root): absolute paths,
//     ".." escapes and symlinks leaving the root are refused with
//     [ErrOutsideRoot] whether or not the target exists, and error messages
//     never carry the underlying OS text about paths.
//   - read_too_large is decided from the file size (about 4 bytes per token)
//     before the file is read; a result over 32 bytes per token of the cap is
//     refused without running the exact counter on it.
//   - schema summarises array items from the first 1,000 elements; max_depth
//     is capped at 32. Values nested deeper than 64 levels are printed compact
//     rather than indented. 10,000-level documents work; nothing recurses on
//     input depth except gjson's validator, whose Go stack grows as needed.
//   - grep uses RE2 syntax (Go regexp), matches line by line, and counts
//     every matching line even when it shows only max_matches of them.
//   - A file is held whole in memory while in use; the cache bounds how many
//     are kept between calls, not the size of one.
package explore
