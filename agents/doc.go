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
// Storage, under memory_dir ([Layout]): without bearer tokens memory_dir
// itself, with one {memory_dir}/owners/{owner}/, the same below:
//
//	scratchpad/                          single agents: diverted outputs (read root)
//	pad/                                 agent "main"'s own pad
//	agents/{agent}/pad/                  any other agent's own pad
//	{run}/iteration-{n}/scratchpad/      an agent of a run: diverted outputs
//	{run}/                               an agent of a run: read root
//	{run}/artifacts/                     run artifacts
//	{run}/pad/                           the run's shared pad ([pad] scope = "run")
//	usage.jsonl                          usage records of these agents
//
// With [pad] backend = "redis" the pads live on a Redis server instead, so
// agents of a run served on different hosts share one: the run's pad is
// the pad id "run:{run}" and an agent's own is "agent:{name}", both
// preceded by "owner:{owner}/" with a bearer token's owner; see [PadID].
// A run's artifacts are then a hash on the same server ([ArtifactsKey]).
// One client serves every pad and artifact store of a [Registry].
//
// # Caveats
//
// Run ids, agent names and owners become path elements, so they are
// restricted to [A-Za-z0-9._-] (1–64 characters, not "." or ".."); anything
// else is refused with [ErrInvalidIdentity], and so are run ids that are
// names of the layout (owners, agents, pad, scratchpad, usage.jsonl).
package agents
