// Package agents maps MCP sessions to agents and gives each agent what the
// rest of the server needs: its identity, token counter, context budget,
// storage directories, read root, pad and run artifacts.
//
// # Basics
//
// One MCP session is one agent. Over stdio the identity comes from flags
// (--agent, --role, --run, --iteration); over HTTP from the request headers
// X-Scratchpad-Agent, X-Scratchpad-Role, X-Scratchpad-Run and
// X-Scratchpad-Iteration (or query parameters of the same names), which
// [WithIdentity] stores in the request context. The model never supplies
// identity: no tool argument reaches this package.
//
// A [Registry] creates an [Agent] the first time a session calls a tool
// ([Registry.Resolve]) and finishes it when the session ends
// ([Registry.Finish]), which emits its usage event.
//
// Storage: each agent gets its owner's [layout.Tree] (memory_dir itself
// without bearer tokens, {memory_dir}/owners/{owner}/ with one) and from it
// its stored-outputs folder, read root and pad; package layout owns every
// name, and this package builds none. A run's agents share the run's
// folder as read root, each iteration its own stored-outputs folder. Each
// of them is opened through memory_dir's os.Root (package memdir): a
// symbolic link planted on the way that leads out of memory_dir refuses
// the agent, its pad or its artifacts with an error wrapping
// [memdir.ErrOutside], and nothing is read or written there.
//
// With [pad] backend = "redis" the pads live on a Redis server instead, so
// agents of a run served on different hosts share one ([layout.PadID]),
// and a run's artifacts are a hash on the same server
// ([layout.ArtifactsKey]). One client serves every pad and artifact store
// of a [Registry].
//
// Each agent is also offered the memory tool (package memory), under its
// [agent.scratchpad] memory_tool (a worker's own; none for ""), on its
// /memories: the memory files of the pad of its
// [memory] scope ([Agent.Memory]), so they share that pad's owner,
// backend, lock and life; what it writes is masked like the pad's writes
// ([redaction] mode).
//
// The registry is retention's guard ([Registry.Protected],
// [Registry.LiveRun]): it records what a live agent needs by the paths its
// tree gives, the same paths a sweep classifies files by, so a live run of
// any owner is kept by construction. With a replicated store
// ([state.Store].Replicated) each replica also holds a lease on each run
// live there (renewed every third of [cluster] lease, released when its
// last agent ends), and [Registry.LiveRun] asks the store too: a sweep on
// one replica keeps a run live on another, and the run of a replica that
// died is swept once its lease expired.
//
// # Caveats
//
// Run ids, agent names and owners become path elements, so they are
// restricted to [A-Za-z0-9._-] (1–64 characters, not "." or ".."); anything
// else is refused with [ErrInvalidIdentity], and so are run ids that are
// names of the layout ([layout.Reserved]).
package agents
