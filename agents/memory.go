package agents

import (
	"context"
	"fmt"

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

// memoryTools is the memory tool, each call on its session's agent's
// /memories; nil without [memory] enabled.
func (r *Registry) memoryTools() ([]tool.Def, error) {
	c := r.opts.Config.Memory
	if !c.Enabled {
		return nil, nil
	}
	defs, err := memory.Tools(func(ctx context.Context) (memory.Store, error) {
		ag, err := r.Resolve(ctx)
		if err != nil {
			return nil, err
		}
		return ag.Memory()
	}, MemoryOptions(c))
	if err != nil {
		return nil, fmt.Errorf("[memory]: %w", err)
	}
	return defs, nil
}

// memoryPad is where the agent's /memories live: the pad of its
// [memory] scope (its run's with scope "run" in a run, its own
// otherwise), a folder of its owner's tree or an id on the pad's Redis;
// both "" without the memory tool.
func (a *Agent) memoryPad() (dir, id string) {
	cfg := a.reg.opts.Config
	if !cfg.Memory.Enabled {
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
		return nil, fmt.Errorf("agents: the memory tool is off ([memory] enabled = false)")
	}
	p, err := a.padAt(a.MemoryDir, a.MemoryID)
	if err != nil {
		return nil, err
	}
	return p.Memory(MemoryStoreOptions(a.reg.opts.Config.Memory)), nil
}
