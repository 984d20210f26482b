package agents

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// MemoryOptions maps [memory] to the memory tool's options.
func MemoryOptions(c config.Memory) memory.Options {
	return memory.Options{MaxFileBytes: c.MaxFileBytes, MaxScopeBytes: c.MaxScopeBytes, MaxFiles: c.MaxFiles,
		TTL: c.TTL, ReadOnly: c.ReadOnly, ReadOnlyPaths: c.ReadOnlyPaths, Shared: c.Scope == config.ScopeRun}
}

// MemoryStoreOptions maps [memory] to what the pad keeps of memory files.
func MemoryStoreOptions(c config.Memory) pad.MemoryOptions {
	return pad.MemoryOptions{History: c.History, Deleted: c.KeepDeleted}
}

// memoryTools is the memory tool under each name an agent may be
// offered it ([agent.scratchpad] memory_tool, and every worker's), each
// call on its session's agent's /memories: [agent.scratchpad]'s name
// first; nil when every name is "".
func (r *Registry) memoryTools() ([]tool.Def, error) {
	cfg := r.opts.Config
	names := []string{cfg.Agent.Scratchpad.MemoryTool}
	for _, w := range slices.Sorted(maps.Keys(cfg.Orchestration.Workers)) {
		names = append(names, cfg.AgentFor(w).Scratchpad.MemoryTool)
	}
	var defs []tool.Def
	for i, name := range names {
		if name == "" || slices.Index(names, name) < i {
			continue
		}
		o := MemoryOptions(cfg.Memory)
		o.Name = name
		d, err := memory.Tools(func(ctx context.Context) (memory.Store, error) {
			ag, err := r.Resolve(ctx)
			if err != nil {
				return nil, err
			}
			return ag.Memory()
		}, o)
		if err != nil {
			return nil, fmt.Errorf("[memory]: %w", err)
		}
		defs = append(defs, d...)
	}
	return defs, nil
}

// memoryTool is the memory tool as an agent of identity id is offered
// it: under its [agent.scratchpad] memory_tool (its worker's), none for
// "".
func (r *Registry) memoryTool(id Identity) []tool.Def {
	name := r.settings(id).Scratchpad.MemoryTool
	for _, d := range r.memory {
		if d.Name == name {
			return []tool.Def{d}
		}
	}
	return nil
}

// isMemoryTool reports whether name is one of the memory tool's names.
func (r *Registry) isMemoryTool(name string) bool {
	return slices.ContainsFunc(r.memory, func(d tool.Def) bool { return d.Name == name })
}

// memoryPad is where the agent's /memories live: the pad of its
// [memory] scope (its run's with scope "run" in a run, its own
// otherwise), a folder of its owner's tree or an id on the pad's Redis;
// both "" when it is offered no memory tool.
func (a *Agent) memoryPad() (dir, id string) {
	cfg := a.reg.opts.Config
	if a.reg.settings(a.ID).Scratchpad.MemoryTool == "" {
		return "", ""
	}
	run := a.ID.PadRun(cfg.Memory.Scope)
	if cfg.Pad.Backend == config.BackendRedis {
		return "", layout.PadID(a.ID.Owner, run, a.ID.Agent)
	}
	return a.Layout.Pad(run, a.ID.Agent), ""
}

// Memory is the agent's /memories: the memory files of the pad of its
// [memory] scope, opened once per location and shared, like the pad, by
// the agents of a run when the scope is the run.
func (a *Agent) Memory() (memory.Store, error) {
	if a.MemoryDir == "" && a.MemoryID == "" {
		return nil, fmt.Errorf("agents: agent %q has no memory tool ([agent.scratchpad] memory_tool = \"\")", a.ID.Agent)
	}
	p, err := a.padAt(a.MemoryDir, a.MemoryID)
	if err != nil {
		return nil, err
	}
	return p.Memory(MemoryStoreOptions(a.reg.opts.Config.Memory)), nil
}
