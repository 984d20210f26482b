// Package retention keeps memory_dir bounded: it removes stored outputs
// older than a maximum age, finished runs, and the oldest stored outputs
// while the directory is over a size cap, and it rotates usage.jsonl.
//
// A sweep is [Scan] (what is on disk, classified by the storage layout),
// [Plan] (what the policy would remove, a pure function of the scan, the
// clock and a [Guard]) and [Execute] (the removals, bounded in time).
// `scratchpad-mcp gc --dry-run` and doctor stop after Plan.
//
// What must stay is told by a [Guard], which the caller implements (the
// agents registry: pads of live agents, live runs, files a live session
// was pointed to; with replicas, runs live on any replica, by their
// leases on the shared store). The package knows nothing of MCP or sessions, only
// absolute paths; the guard is asked again right before each removal.
//
// Nothing is half-deleted. A file is removed with one unlink, so it is
// either whole or gone. A finished run is first renamed, in one rename,
// to a hidden trash name in memory_dir ([layout.TrashName]) and then emptied:
// a sweep killed part-way leaves the run either whole under its name or
// (partly) in the trash, which no tool lists and the next sweep empties.
// Temporary files of writes a crash interrupted ([layout.IsTemp]) are removed
// once they are older than [Policy].TempGrace (a younger one may be
// another process's write still in flight).
//
// Every name a sweep knows (the kinds of files, the runs they belong to,
// the owners' trees, temporary, trash and lock names) comes from package
// layout, which builds the same paths the writers use: a run is asked
// about by the path [layout.Tree.Run] gives, the one the agents registry
// protects.
package retention
