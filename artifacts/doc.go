// Package artifacts stores the files a run's coordinator hands to its
// workers, in the run's artifacts folder (package layout names it), and serves the
// write_artifact, read_artifact and list_artifacts tools over them.
//
// # Basics
//
// A [Store] is one run's artifacts directory:
//
//	d, _ := memdir.In(memoryDir, layout.For(memoryDir, owner).Artifacts(runID))
//	s, _ := artifacts.Open(d)
//	res, err := s.Write("../../plan.md", text) // res.Filename == "coordinator-plan.md"
//	got, err := s.Read("plan.md", 0)           // finds coordinator-plan.md
//	list, err := s.List(counter)
//
// Writes are named by [StoredName] and atomic (package memdir's write:
// temp file, fsync, rename, directory fsync; files 0600, directory 0700).
// The folder is reached through memory_dir's [os.Root], and what is in it
// through a root on the folder: a link planted at the run's folder or its
// artifacts/ that leads out of memory_dir fails a write with an error
// wrapping memdir.ErrOutside, a read or listing with
// [ErrOutsideArtifacts], and absolute paths, ".." and links leading out
// of the folder fail with [ErrOutsideArtifacts] too; no message names an
// outside path. A name that is not there is not an error: [ReadResult]
// lists up to [MaxAvailable] names that are.
//
// [Tools] returns the tools as [tool.Def] values, free of any MCP library;
// the server registers for each session those [Visible] lets it see, which
// hides write_artifact from workers. Each call resolves the
// session's [Env] through the [EnvFunc] the server passes: its store,
// role, [Budget], token [Counter] and per-call cap. read_artifact returns a
// file inline, with a footer, and charges the budget when the whole result
// fits both the per-call cap and the remaining budget; otherwise it
// returns a read_artifact_too_large object with the file's in-place path
// (../../artifacts/<name> by default, as seen from a worker's
// iteration-{n}/scratchpad directory) and ready-to-run exploration calls, so
// the file is explored where it lies and never copied.
//
// # Caveats
//
//   - A coordinator with no budget gets any artifact inline, however
//     large; give coordinators a budget to protect their context.
//   - A file larger than 32 bytes per token of the limit is answered with
//     the pointer without being read or counted; its estimated_tokens is
//     then size/4.
//   - read_artifact's run_id reaches other runs only when [Env].OpenRun
//     is set; such files are outside the session's read root, so a too
//     large one gets no in-place path.
//   - Replaced is exact within one process; two processes writing the
//     same name at once may both report replaced: false (files; on Redis
//     HSET says it exactly).
//
// # Redis
//
// [OpenRedis] keeps a run's artifacts in one Redis hash (name → content)
// instead, so the agents of a run on several hosts share them. Names,
// lookups, listings and answers are the same. An artifact too large to
// return is copied by [Store.Local] to the store's folder on this host
// ([Store.Dir]), which is where the in-place pointer leads; a write removes this
// host's copy, and every pointer refreshes it.
package artifacts
