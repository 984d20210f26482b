// Package layout owns every name scratchpad-mcp stores things under: the
// paths below memory_dir, the Redis keys of pads and artifacts, the names
// of temporary files, and the classification a retention sweep reads back
// from a path. It imports nothing of the project; every package that
// writes, finds or removes a stored thing asks this one.
//
// # Basics
//
// [For] gives an owner's [Tree]: memory_dir itself without bearer tokens,
// {memory_dir}/owners/{owner} with one. Below its base every tree is the
// same:
//
//	scratchpad/                        single agents: stored outputs
//	pad/                               agent "main"'s own pad
//	agents/{agent}/pad/                any other agent's own pad
//	{run}/                             a run (read root of its agents)
//	{run}/iteration-{n}/scratchpad/    a worker's stored outputs
//	{run}/artifacts/                   the run's artifacts
//	{run}/pad/                         the run's shared pad
//	usage.jsonl                        usage records of this owner's agents
//
// A pad's folder holds, besides its document, ledger and history, the
// memory files of package memory's /memories ([PadMemoriesDir]) and their
// versions ([PadMemoriesHistoryDir]); on Redis they are the pad's memory
// keys ([RedisPadMemory] and the rest). They are the pad's: its owner, its
// scope, its lock, its TTL and its deletion.
//
// The same tree is read back by [Classify], which names the [Kind] of a
// file and the run it belongs to exactly as [Tree.Run] builds it, so that
// what the agents registry protects and what a sweep asks about are one
// path by construction (a run recorded as {memory_dir}/{run} while the
// sweep asked about owners/{owner}/{run} is how a live run was swept).
//
// On Redis a pad is the id [PadID] gives (run:{run} or agent:{name},
// after the owner's segment), every key of it starting with [RedisBase]
// and named by [RedisKey] from a [RedisPart] (doc, history, lock, …; the
// table [RedisPadParts] lists them all, with what ends each one's life);
// a run's artifacts are the hash [ArtifactsKey].
//
// Temporary files of atomic writes are named by [TempPattern] or
// [TempName] and recognised by [IsTemp]; a sweep removes those a crash
// left behind.
//
// # Caveats
//
// Owners, agents and runs become path elements and key segments. This
// package does not validate them: package agents does, once, and a run
// may not take a [Reserved] name. The functions here take plain strings
// and never touch the disk, except [Scopes], which lists the owners'
// trees present in a memory_dir's fs.FS. Opening, writing and removing
// what these names name is package memdir's, through an os.Root on
// memory_dir.
package layout
