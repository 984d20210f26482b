// Package memory is the memory tool models are trained on (Anthropic's
// memory_20250818): one tool, memory, whose command is view, create,
// str_replace, insert, delete or rename, over a directory /memories that
// outlives the conversation. A model that knows the tool uses it without
// reading a description: the command set, the argument names and the
// answers are the documented ones.
//
// # Basics
//
// [Tools] returns the tool; the server registers it beside the pad's
// tools. Each call's scope (an agent's own /memories, or its run's,
// always under its owner) is the [Store] its [StoreFunc] picks from the
// session: the model never names one. The pad's backends implement
// Store (pad.Pad.Memory), so memory files live in the pad's folder or
// under the pad's keys on Redis, with its lock, history and life.
//
//	defs, err := memory.Tools(func(ctx context.Context) (memory.Store, error) {
//		p, err := padFor(ctx)
//		if err != nil {
//			return nil, err
//		}
//		return p.Memory(pad.MemoryOptions{}), nil
//	}, memory.Options{MaxFileBytes: 64 << 10})
//
// [Memory.Do] runs one [Command] on a store, for Go callers:
//
//	m, err := memory.New(store, memory.Options{})
//	text, err := m.Do(memory.Command{Command: memory.CmdView, Path: &root})
//
// The answers, as the tool's documentation gives them:
//
//   - view of a folder: "Here're the files and directories up to 2
//     levels deep in {path}, excluding hidden items and node_modules:",
//     then "{size}\t{path}" for the folder and everything in it two
//     levels down (sizes as du -h gives them; a folder's is what its
//     files hold; folders end with /).
//   - view of a file: "Here's the content of {path} with line numbers:",
//     then each line as "%6d\t{line}"; view_range [first, last] (last -1:
//     to the end) shows a window.
//   - create: "File created successfully at: {path}"; an existing file
//     is refused ("Error: File {path} already exists"). The folders on
//     the way are created.
//   - str_replace: old_str must appear exactly once: "The memory file has
//     been edited." and a snippet of numbered lines around the change;
//     otherwise "No replacement was performed, …" names what happened
//     (not found; found on lines 3, 9) and nothing changes.
//   - insert: insert_text goes in as lines after line insert_line (0:
//     at the top): "The file {path} has been edited."; a line outside
//     [0, lines] is refused.
//   - delete: a file, or a folder and everything in it: "Successfully
//     deleted {path}".
//   - rename: a file or folder to a path that does not exist yet, its
//     folders created: "Successfully renamed {old} to {new}".
//
// Errors name the path. A refusal is an [*Error] (its message is the
// answer; it wraps a sentinel such as [ErrNotFound] or [ErrTooLarge]),
// returned to the model as an error result, as the tool's clients
// answer; nothing was changed.
//
// Beyond the documented tool:
//
//   - Revisions: every file has one (1 when created, one more per write,
//     continued after a delete), shown as a last line "(revision N)" of a
//     file's view and of every write's answer. expected_revision, given
//     with a write, makes it compare-and-swap: refused, nothing changed,
//     unless the file is at that revision (0: it must not exist). create
//     with the current revision replaces the file.
//   - Bounds ([Options]): bytes per file, bytes of the whole scope, files
//     per scope. A write past one is refused naming it; one that does not
//     grow a file passes, so a scope over a lowered bound can be tidied.
//   - Expiry: with [Options.TTL], a file neither read nor written for
//     that long is no longer seen, and the next write removes it; a view
//     renews it.
//   - Read-only: [Options.ReadOnlyPaths] are files or folders the model
//     may only view (an operator's guidelines); [Options.ReadOnly] makes
//     the whole scope so.
//
// # Paths
//
// Every path, read or written, goes through [Clean]: it must start with
// /memories; "..", a percent-encoded character, a backslash, NUL and
// other control or invisible formatting characters, invalid UTF-8,
// hidden names (".x", the store's own), names with outer spaces, and
// names, paths or depths past [MaxNameBytes], [MaxPathBytes] and
// [MaxDepth] are refused with a message saying which. Repeated slashes,
// "." and a trailing slash are dropped. A store refuses a path that runs
// through a symbolic link ([ErrLink]); the pad's file store also reaches
// every file through memory_dir's os.Root.
//
// # Caveats
//
//   - Folders exist only while they hold a file: there is no empty
//     folder (the memory tool has no mkdir; a delete leaves none behind).
//   - Revisions and the other lines this package adds are after the
//     documented text, so a model that does not use them reads the answer
//     it knows.
//   - Refusals are error results (isError), as the memory tool's clients
//     answer, not the JSON error objects of this server's other tools.
//   - Redaction of what is written is the server's (package agents masks
//     credentials in a call's arguments before the tool runs); this
//     package stores what it is given.
package memory
