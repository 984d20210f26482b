// Package explore implements the nine read-only exploration tools an agent
// uses on stored outputs: head, slice, grep, schema, item_schema, get_in,
// iterate_over, count_by and read. They pull exactly the slice the model
// needs out of a file that was too large to put in its context, or answer
// its question about the file in one call (which pods fail, how many per
// namespace), never more than the per-call cap and never past the agent's
// context budget.
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
// fix (key_path_not_found, bad_filter, invalid_path, not_json, invalid_json,
// not_an_array, invalid_range, invalid_arguments, file_not_found,
// file_outside_root, pattern_too_long, io_error, cancelled, busy: see
// [Env].Slots and [Env].OwnerSlots) have the same
// shape. They are successful tool results, not protocol errors, and are not
// charged.
//
// Paths are RFC 9535 JSONPath when they start with $ ($.items[3].name,
// $.items[*].id, $..children[?@.type == 'file'], $.a['b c'], $[-3:]),
// parsed strictly: what the RFC refuses is invalid_path with the column
// ([ErrBadPath]). Without the $ they are the dotted shorthand,
// items.3.metadata.name (a number after a dot is an index or a key), whose
// bracketed segments are the RFC's. A path that is not singular selects a
// node list: get_in answers its values, and iterate_over (rows with the
// node's normalized path as _path), count_by and item_schema take its
// nodes as their items. docs/jsonpath.md shows the language by example.
// An NDJSON file is an array of its records; a CSV or TSV file, for the JSON path tools, an array of
// row objects keyed by the header (cells that are JSON numbers are numbers,
// true/false booleans, empty cells null). Files are classified by extension
// (.json, .ndjson/.jsonl, .md, .csv, .tsv) and, for others such as .txt and
// .log, by content. grep without a file searches every file under the read
// root (dot files and binary files excepted) and names each relative to
// [Env.Dir], as the file argument takes it.
//
// # Queries
//
// iterate_over, get_in and count_by take a filter over the items of the
// array at path; iterate_over also sort_by and order. The window (offset,
// limit) is over the matches, and the footer says how many matched out of
// how many were scanned:
//
//	--- iterate_over: $.items (matches [0..20) of 36,646, scanned 183,203, sorted by status.restartCount desc, fields: [metadata.name]) | …
//
// count_by counts the matching items by the values of group_by fields
// (several give one group per combination; a [*] field counts an item once
// per element), biggest groups first, top of them shown and the rest summed
// in an "other" row. distinct counts a field's distinct values (per group
// when group_by is given). Numbers get min, max, sum, mean and the
// nearest-rank p50 and p95.
//
// # Filter grammar
//
// Filters are RFC 9535 filter expressions, written ?(expr), ?expr, [?expr],
// $[?expr] or just expr; a path ending in one filter over an array is that
// array and the filter ([ErrBadFilter] when it does not parse).
//
//	expr       = or
//	or         = and *("||" and)
//	and        = basic *("&&" basic)
//	basic      = ["!"] "(" or ")" / ["!"] test / comparable op comparable
//	           / comparable "=~" (/re/flags / 're' / comparable)   ; extension
//	           / comparable "in" "[" literal *("," literal) "]"     ; extension
//	test       = query / match(v, re) / search(v, re)
//	op         = "==" / "!=" / "<" / "<=" / ">" / ">="
//	comparable = literal / singular-query / length(v) / count(query) / value(query)
//	literal    = 'string' / "string" / number / true / false / null
//	query      = ("@" / "$") *segment    ; @ is the item, $ the file's root
//	segment    = .name / .* / [selectors] / ..name / ..* / ..[selectors]
//	selector   = 'name' / index / start:end:step / * / ?expr
//
// Comparisons follow RFC 9535: values of different types are neither equal
// nor ordered (so 1 == '1' is false), a missing field equals only another
// missing field and is neither less nor greater than anything, strings
// order by code point, and a test is true when the query selects a node,
// even null. A comparison takes single values: @.containers[*].image ==
// 'nginx' is refused, @.containers[?@.image == 'nginx'] asks whether any
// container's is. match() and search() take I-Regexp (RFC 9485) patterns,
// translated to RE2 (compileIRegexp); a pattern that is not one matches
// nothing. The extensions, which no valid RFC 9535 expression contains:
// =~ matches an RE2 regular expression anywhere in a string (/re/i for
// case-insensitive), "in" tests membership in a list of literals. group_by,
// distinct, sort_by and fields take the dotted shorthand relative to an
// item (status.phase, spec.containers[*].image), or a query from @.
//
// Numbers that arrive as text (server-postgres sends bigint and numeric as
// strings): a field whose every non-null value is a decimal number written
// as a string is read as the number in a filter's comparisons with a
// number, in sort_by and in count_by's statistics, and the footer says so
// ("installed_size_kb: numbers as text, compared as numbers"); a field
// where such strings stand next to other values is compared as the RFC
// says, and the footer says that too. item_schema types them "string
// (numeric)".
//
// A filter that does not parse is bad_filter, naming the column and giving
// a corrected filter (= for ==, and/or, a missing @., the RFC form of a
// comparison of several values) or one built from the first item; a field
// that no item has (a typo) is key_path_not_found with the keys the items
// do have (for a filter only when it matched nothing and the field is
// compared, not merely tested for). sort_by on a field that selects
// several nodes orders by the first.
//
// # Taking a part for another tool
//
// [Take] reads a stored output through the same read root, names and
// paths, and returns the whole file as stored, the value a path selects
// (a node list as an array), or lines, as bytes for another tool call's
// arguments (package reference): nothing rendered, capped or charged. A
// problem is a [*Refusal] carrying the answer an exploration tool gives
// for it (with its suggestions); [Stored] lists the outputs most like a
// name that is not there.
//
// # Speed
//
// A file is read once into memory with a line-offset index and kept in a
// [Cache] (an LRU with a byte budget shared by all agents, keyed so that a
// rewritten file is never served stale). JSON is validated and indexed in
// one iterative pass and then walked as raw bytes; the member list of any
// container of 64 KiB or more is kept, so item 400,000 of a
// 100 MB listing is a slice index away on the next call. grep searches the
// whole buffer with bytes.Index for the literal every match must contain and
// runs the regexp only on candidate lines.
//
// Filters are evaluated by this package over the same raw bytes, not by a
// JSONPath library: a singular path is a walk over the item's members
// (values skipped 8 bytes at a time to the next quote or bracket), strings
// without escapes are compared as the bytes between their quotes and
// integers parsed in place, so the hot path allocates nothing; items are
// split among the cores.
// A path's segment that fans out ([*], [?…], ..*, ..[?…]) lists the
// children of its input nodes, then filters them on every core; a descent
// reads each byte once, from the list of the file's containers (with
// where each ends) built on its first ".." and kept with the file.
// theory/jsonpath, which passes the compliance suite too, was weighed for
// the parser and not taken: its syntax tree would be translated into this
// evaluator's anyway, and the shorthand, the extensions and the corrected
// filters need this parser (NOTES.md, issue 54). github.com/ohler55/ojg, which implements RFC 9535,
// evaluates over parsed Go values: on the 100 MB pod listing its parse
// alone took 1.2 s and the process peaked at 902 MB (jq: 680 MB), against
// the ≤ 1/3 of jq's memory this package is held to. Measured on 2 cores
// (make bench): filter + count over 183,203 pods 0.37 s in a fresh process
// (jq 5.2 s, 14×; peak 163 MB, jq 666 MB), and 90-130 ms on the indexed
// file.
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
//     rather than indented. 10,000-level documents work and nothing recurses
//     on input depth; a JSON file nested deeper than 100,000 levels is not
//     indexed (its index would cost a frame a level), and NDJSON records
//     deeper than 10,000 are not valid records (jsonscan.MaxDepth).
//   - grep uses RE2 syntax (Go regexp), matches line by line, and counts
//     every matching line even when it shows only max_matches of them.
//     Without a file it stops after 10,000 files or 4 GiB and lists at most
//     50 files; files not in the cache are read for the search only.
//   - =~ takes RE2 (as grep); match() and search() take I-Regexp, as RFC
//     9535 says, where ^ and $ anchor (as the compliance suite has them)
//     and the category \p{Cn} is not supported.
//   - A node list holds at most 8,388,608 nodes ($..*..* lists a node once
//     per ancestor); past it the answer is <tool>_too_large. Numbers as
//     text are looked for in the item's own fields (@.x, @.a.b), not in
//     filters nested inside filters.
//   - count_by tracks at most 100,000 groups (and distinct values); items in
//     further groups are counted in the other row, and the footer says so.
//     An item contributes at most 256 combinations of group_by values.
//   - Sorting follows jq's order (null and missing < false < true < numbers
//     < strings < arrays < objects; arrays and objects by their text) and
//     keeps item order among equal keys in both directions. A duplicate key
//     in an object resolves to its first occurrence (jq takes the last).
//   - $ in a filter on an NDJSON file selects nothing (the file has no root
//     value); a filter cannot read outside the item other than through $.
//     NDJSON records that are not valid JSON are not scanned by filters,
//     sort_by or count_by ("scanned" counts the valid ones).
//   - A file is held whole in memory while in use; the cache bounds how many
//     are kept between calls, not the size of one.
//   - Every argument has a bound in its schema, which [Call] enforces too
//     (invalid_arguments naming it): line numbers, offset and limit at most
//     10^9, lines and top 100,000, max_matches 10,000, context 1,000,
//     max_depth 10,000; file, path, filter and field lists 4,096 characters
//     (their parsers: 4,096 bytes, in linear time), at most 64 fields and
//     1,024 segments a field; pattern 1,024 bytes (pattern_too_long). No
//     argument sizes what a call allocates: grep walks only the context
//     lines it shows, and windows (grep's lines, get_in's items,
//     iterate_over's rows) are copied only up to the per-call cap's bytes,
//     then measured for the too-large answer.
package explore
