package layout

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the layout's folders and files.
const (
	OwnersDir       = "owners"      // memory_dir/owners/{owner}/: one owner's tree (bearer tokens)
	AgentsDir       = "agents"      // agents/{agent}/pad/: an agent's own pad
	ScratchpadDir   = "scratchpad"  // stored outputs
	PadDir          = "pad"         // a pad's folder
	ArtifactsDir    = "artifacts"   // a run's artifacts
	UsageFile       = "usage.jsonl" // usage records; rotations are usage.jsonl.1 … .N
	IterationPrefix = "iteration-"  // {run}/iteration-{n}/
)

// DefaultAgent is the agent name of a session that names none; its pad is
// the short pad/ of the tree.
const DefaultAgent = "main"

// reserved are the names a run id may not take: a run's folder sits next
// to these, and a run named "owners" would be a read root over every
// owner's things.
var reserved = map[string]bool{OwnersDir: true, AgentsDir: true, PadDir: true, ScratchpadDir: true, UsageFile: true}

// Reserved reports whether run is a name of the layout that no run may
// take.
func Reserved(run string) bool { return reserved[run] }

// Tree is where one owner's things live under memory_dir.
type Tree struct {
	Base string // memory_dir, or memory_dir/owners/{owner}
}

// For returns owner's tree under memoryDir; owner "" is the single-user
// tree, memoryDir itself.
func For(memoryDir, owner string) Tree {
	if owner == "" {
		return Tree{Base: filepath.Clean(memoryDir)}
	}
	return Tree{Base: filepath.Join(memoryDir, OwnersDir, owner)}
}

// Scratchpad is where single agents' outputs are stored (their read root).
func (t Tree) Scratchpad() string { return filepath.Join(t.Base, ScratchpadDir) }

// Run is a run's folder: the read root of the run's agents, and the path
// a sweep names the run by.
func (t Tree) Run(run string) string { return filepath.Join(t.Base, run) }

// RunScratchpad is where the agents of iteration n of run store outputs.
func (t Tree) RunScratchpad(run string, n int) string {
	return filepath.Join(t.Run(run), IterationScratchpad(n))
}

// IterationScratchpad is [Tree.RunScratchpad] relative to the run's folder
// (the exploration tools' directory inside the run's read root).
func IterationScratchpad(n int) string {
	return filepath.Join(IterationPrefix+strconv.Itoa(n), ScratchpadDir)
}

// Artifacts is a run's artifacts folder (on Redis: this host's cache of
// the large ones).
func (t Tree) Artifacts(run string) string { return filepath.Join(t.Run(run), ArtifactsDir) }

// RunPad is a run's shared pad.
func (t Tree) RunPad(run string) string { return filepath.Join(t.Run(run), PadDir) }

// AgentPad is an agent's own pad: pad/ for the default agent, agents/{name}/pad/
// for any other.
func (t Tree) AgentPad(agent string) string {
	if agent == "" || agent == DefaultAgent {
		return filepath.Join(t.Base, PadDir)
	}
	return filepath.Join(t.Base, AgentsDir, agent, PadDir)
}

// Pad is the pad folder of an agent that shares run's pad (run != "") or
// keeps its own (run == ""): the caller passes the run only when the pad's
// scope is the run.
func (t Tree) Pad(run, agent string) string {
	if run != "" {
		return t.RunPad(run)
	}
	return t.AgentPad(agent)
}

// Usage is the tree's usage.jsonl.
func (t Tree) Usage() string { return filepath.Join(t.Base, UsageFile) }

// ArtifactsFromScratchpad is a run's artifacts folder as the exploration
// tools of the run's agents reach it: their file arguments resolve from
// {run}/iteration-{n}/scratchpad inside the read root {run}.
const ArtifactsFromScratchpad = "../../" + ArtifactsDir + "/"

// TreeOf is the owner's tree a slash path relative to memory_dir lies in:
// "owners/{owner}" for a bearer token's owner, "" for the single-user
// tree (memory_dir itself, less owners/). What is kept per owner (the
// index of stored outputs on Redis) is kept per TreeOf.
func TreeOf(name string) string {
	first, rest, ok := strings.Cut(name, "/")
	if first != OwnersDir || !ok {
		return ""
	}
	owner, _, _ := strings.Cut(rest, "/")
	return OwnersDir + "/" + owner
}
