package agents

import (
	"path/filepath"
	"strconv"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// OwnersDir is the folder of memory_dir that holds one folder per bearer
// token owner.
const OwnersDir = "owners"

// DefaultAgent is the agent name of a session that names none; its pad is
// the short pad/ of the single-user layout.
const DefaultAgent = "main"

// reservedRuns are names a run id may not take: with the single-user
// layout a run's folder sits next to these, and a run named "owners"
// would be a read root over every owner's things.
var reservedRuns = map[string]bool{OwnersDir: true, "agents": true, "pad": true, "scratchpad": true, budget.UsageFile: true}

// Layout is where one owner's things live on disk. Without an owner
// (no bearer tokens: stdio, or HTTP on loopback) it is memory_dir itself;
// with one it is {memory_dir}/owners/{owner}. Everything below is the same
// for both:
//
//	scratchpad/                        single agents: stored outputs
//	pad/                               agent "main"'s own pad
//	agents/{agent}/pad/                any other agent's own pad
//	{run}/                             a run (read root of its agents)
//	{run}/iteration-{n}/scratchpad/    a worker's stored outputs
//	{run}/artifacts/                   the run's artifacts
//	{run}/pad/                         the run's shared pad ([pad] scope = "run")
//	usage.jsonl                        usage records of this owner's agents
type Layout struct {
	Base string // memory_dir, or memory_dir/owners/{owner}
}

// LayoutFor returns owner's layout under memoryDir; owner "" is the
// single-user layout. owner must be a valid name (config checks it).
func LayoutFor(memoryDir, owner string) Layout {
	if owner == "" {
		return Layout{Base: memoryDir}
	}
	return Layout{Base: filepath.Join(memoryDir, OwnersDir, owner)}
}

// Scratchpad is where single agents' outputs are stored.
func (l Layout) Scratchpad() string { return filepath.Join(l.Base, "scratchpad") }

// Run is a run's folder.
func (l Layout) Run(run string) string { return filepath.Join(l.Base, run) }

// RunScratchpad is where an agent of a run stores outputs, relative to the
// run's folder.
func RunScratchpad(iteration int) string {
	return filepath.Join("iteration-"+strconv.Itoa(iteration), "scratchpad")
}

// RunPad is a run's shared pad.
func (l Layout) RunPad(run string) string { return filepath.Join(l.Base, run, "pad") }

// AgentPad is an agent's own pad: pad/ for the default agent (the short
// single-user layout), agents/{name}/pad/ for any other.
func (l Layout) AgentPad(agent string) string {
	if agent == "" || agent == DefaultAgent {
		return filepath.Join(l.Base, "pad")
	}
	return filepath.Join(l.Base, "agents", agent, "pad")
}

// Usage is this owner's usage.jsonl.
func (l Layout) Usage() string { return filepath.Join(l.Base, budget.UsageFile) }

// PadDir is the pad an agent of identity id uses under scope ("agent" or
// "run") on the file backend.
func (l Layout) PadDir(scope string, id Identity) string {
	if scope == config.ScopeRun && id.Run != "" {
		return l.RunPad(id.Run)
	}
	return l.AgentPad(id.Agent)
}
