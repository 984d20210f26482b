// Package pad is the agent's working memory: a scratchpad it reads every
// turn and patches, that a person can open and fix by hand, and that
// survives compaction, context resets and crashes.
//
// # Basics
//
// A pad is a directory, {memory_dir}/pad for one agent or
// {memory_dir}/{run_id}/pad when a run's agents share it. [Open] returns a
// [*Pad] for it; nothing is created until the first write.
//
//	p, err := pad.Open(dir, pad.Options{}) // six default sections
//	res, err := p.Update([]pad.Patch{
//		{Section: "Plan", Op: pad.OpAppend, Content: "Reproduce the bug"},
//		{Section: "Plan", Op: pad.OpCheck, Content: "1"},
//	})
//	fmt.Print(res.Diff, res.Warnings)
//	_, err = p.Append("the API pages at 100 items (docs/api.md)", []string{"api"})
//	text, err := p.Read(nil) // what read_scratchpad returns
//
// The pad file, pad.md, is plain Markdown: one "## Name" heading per
// declared [Section], in order, empty sections included so its shape and
// diffs stay stable. Each section has a cap in characters and a purpose;
// [Pad.Read] shows both to the model as a contract. [Pad.Update] applies
// [Patch] operations (append, replace, check, remove, clear) all or
// nothing: an unknown section or op, or a check without a number, is a
// [*PatchError] and nothing changes. An empty patch list writes nothing.
// Going over a cap is never truncated: the text is kept and a warning
// tells the model to condense.
//
// Findings go to the ledger, entries.jsonl, through [Pad.Append]: one JSON
// line per entry, written with a single O_APPEND write under an flock on
// a sidecar file, so any number of goroutines and processes can append at
// once and every entry lands whole. [Options.EntryTTL] hides old entries;
// the file keeps them until a lazy compaction ([Pad.Compact]).
//
// With [Options.Format] "json" the pad is structured: pad.json holds one
// object, [Pad.Merge] deep-merges updates into it (objects merge, arrays
// and scalars replace, null deletes; __proto__, constructor and prototype
// are stripped at every depth; depth is capped) and the result must pass
// [Options.Schema], or nothing changes.
//
// [Register] exposes a pad over MCP: read_scratchpad, update_scratchpad
// and append_scratchpad (no identity arguments: the server picks the pad
// from the session), the resource scratchpad://pad with subscribe support,
// and the prompt "scratchpad". [Command] backs `scratchpad-mcp pad`.
//
// # Durability
//
// Every save holds the pad lock (.pad.lock) across read-modify-write,
// writes a temp file in the same directory, fsyncs it, renames it over the
// pad file and fsyncs the directory. Each saved version, and a hand edit
// found at save time, goes to .history/ ([Options.History] versions, 20 by
// default); [Pad.Diff] and [Pad.Restore] work on it. Nothing is cached
// between calls, so a hand edit is seen on the next one.
//
// A pad file that no longer parses (unknown or duplicate heading, text
// before the first heading, invalid UTF-8, broken JSON) is moved to
// pad.md.broken-<unix time>, the newest version in history that parses is
// restored, and the next read starts with a note saying so. The pad is
// never reset to empty: with no good version, the text under known
// headings is kept and the rest stays in the broken file.
//
// # Caveats
//
//   - Locks are flock(2): cross-process safety needs a local file system
//     on a unix host. On other systems they exclude goroutines only, and
//     NFS may not honour them.
//   - Only a level-2 heading ("## ") opens a section, even inside a code
//     fence; replace refuses content with such a line.
//   - check ticks the item by the number written in the file, so a hand
//     renumbering is respected.
//   - Subscribers hear of changes made through this server's tools at
//     once, and of changes made elsewhere (hand edits, the CLI, other
//     server processes sharing a run's pad) within a poll interval (2s),
//     detected by file mtime and size.
//   - [Register] needs the server built with
//     server.WithResourceCapabilities(true, …) for resources/subscribe;
//     sessions that opt in through the 2026-07-28 subscriptions/listen
//     stream are not tracked.
//   - [Open] removes temp files left by a crash, under the lock, so even
//     `pad show` on an existing directory may tidy it.
package pad
