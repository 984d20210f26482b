package config

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Memory is [memory]: the memory tool's settings (package memory), models'
// own memory directory /memories, kept on the pad's storage (files by
// default, Redis with [pad] backend = "redis"). Whether an agent is
// offered the tool, and under which name, is [agent.scratchpad]
// memory_tool ([Scratchpad].MemoryTool), per worker.
type Memory struct {
	// Scope is whose /memories an agent sees: ScopeAgent (its own) or
	// ScopeRun (its run's, shared by the run's agents; an agent outside
	// a run has its own). Default: [pad] scope.
	Scope         string
	MaxFileBytes  int64         // one file; default 64 KiB
	MaxScopeBytes int64         // all files of a scope; default 1 MiB
	MaxFiles      int           // files of a scope; default 200
	History       int           // versions kept per file; default [pad] history
	KeepDeleted   int           // deleted files whose versions are kept; default 200
	TTL           time.Duration // a file neither read nor written this long expires; 0 (default): never
	ReadOnly      bool          // only view is allowed
	// ReadOnlyPaths are files or folders ("/memories/policies/") the
	// model may view and not change.
	ReadOnlyPaths []string
}

// Defaults of [Memory].
const (
	DefaultMemoryMaxFileBytes  = 64 << 10
	DefaultMemoryMaxScopeBytes = 1 << 20
	DefaultMemoryMaxFiles      = 200
	DefaultMemoryKeepDeleted   = 200
)

func defaultMemory() Memory {
	return Memory{Scope: ScopeAgent, History: DefaultPadHistory, MaxFileBytes: DefaultMemoryMaxFileBytes,
		MaxScopeBytes: DefaultMemoryMaxScopeBytes, MaxFiles: DefaultMemoryMaxFiles, KeepDeleted: DefaultMemoryKeepDeleted}
}

// Bounds of [memory]'s values.
const (
	maxMemoryFileBytes  = 16 << 20 // a file is read whole into a model's context
	maxMemoryScopeBytes = 1 << 30
	maxMemoryFiles      = 100_000
	maxMemoryTTL        = 10 * 365 * 24 * time.Hour
)

// memory decodes [memory]; enabled is its deprecated key's value, nil
// when absent (see [decoder.memoryEnabled]).
func (d *decoder) memory(p keyPath, v any, mc *Memory) (enabled *bool) {
	m, ok := d.table(p, v)
	if !ok {
		return nil
	}
	d.checkKeys(p, m, "enabled", "scope", "max_file_bytes", "max_scope_bytes", "max_files", "history", "keep_deleted", "ttl", "read_only", "read_only_paths")
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean(p.key("enabled"), v); ok {
			enabled = &b
		}
	}
	if v, ok := m["scope"]; ok {
		mc.Scope, _ = d.oneOf(p.key("scope"), v, ScopeAgent, ScopeRun)
	}
	bytes := func(key string, max int64, into *int64) {
		v, ok := m[key]
		if !ok {
			return
		}
		n, ok := d.size(p.key(key), v)
		switch {
		case !ok:
		case n < 1 || n > max:
			d.fail(p.key(key), "%s out of range [1 B, %s]", SizeText(n), SizeText(max))
		default:
			*into = n
		}
	}
	bytes("max_file_bytes", maxMemoryFileBytes, &mc.MaxFileBytes)
	bytes("max_scope_bytes", maxMemoryScopeBytes, &mc.MaxScopeBytes)
	if _, ok := m["max_scope_bytes"]; ok && mc.MaxScopeBytes < mc.MaxFileBytes {
		d.fail(p.key("max_scope_bytes"), "%s is less than max_file_bytes (%s): no file could reach its bound", SizeText(mc.MaxScopeBytes), SizeText(mc.MaxFileBytes))
	}
	if v, ok := m["max_files"]; ok {
		if n, ok := d.integer(p.key("max_files"), v, 1, maxMemoryFiles); ok {
			mc.MaxFiles = n
		}
	}
	if v, ok := m["history"]; ok {
		if n, ok := d.integer(p.key("history"), v, 1, 10_000); ok {
			mc.History = n
		}
	}
	if v, ok := m["keep_deleted"]; ok {
		if n, ok := d.integer(p.key("keep_deleted"), v, 1, maxMemoryFiles); ok {
			mc.KeepDeleted = n
		}
	}
	if v, ok := m["ttl"]; ok {
		if x, ok := d.age(p.key("ttl"), v); ok {
			if x > maxMemoryTTL {
				d.fail(p.key("ttl"), "longer than 10 years")
			} else {
				mc.TTL = x
			}
		}
	}
	if v, ok := m["read_only"]; ok {
		mc.ReadOnly, _ = d.boolean(p.key("read_only"), v)
	}
	if v, ok := m["read_only_paths"]; ok {
		if paths, ok := d.strings(p.key("read_only_paths"), v); ok {
			for i, s := range paths {
				if why := memoryPathProblem(s); why != "" {
					d.fail(p.key("read_only_paths").index(i), "%q: %s", s, why)
				}
			}
			mc.ReadOnlyPaths = paths
		}
	}
	return enabled
}

// memoryEnabled applies [memory] enabled (p), deprecated since the
// memory tool is on by default and [agent.scratchpad] memory_tool names
// it: enabled = false is memory_tool = "" for [agent.scratchpad] (a
// worker that sets memory_tool keeps its own), enabled = true changes
// nothing. Either way c.Deprecated says what to write instead. A file
// that sets both keys is refused: which one wins would be a guess.
// root is the whole document.
func (d *decoder) memoryEnabled(p keyPath, on bool, root map[string]any, c *Config) {
	agent, _ := root["agent"].(map[string]any)
	sp, _ := agent["scratchpad"].(map[string]any)
	if _, set := sp["memory_tool"]; set {
		d.fail(p, "replaced by [agent.scratchpad] memory_tool, which this file sets too: remove memory.enabled")
		return
	}
	msg := `deprecated and ignored: the memory tool is on by default; remove it`
	if !on {
		c.Agent.Scratchpad.MemoryTool = ""
		msg = `deprecated: write memory_tool = "" in [agent.scratchpad] instead (it turns the memory tool off; memory.enabled = false still does, for now)`
	}
	pos, _ := d.pos.key(p)
	e := &Error{File: d.file, Key: p.String(), Line: pos.Line, Col: pos.Col, Msg: msg}
	c.Deprecated = append(c.Deprecated, e.Error())
}

// MaxToolName bounds a tool's name: MCP's (2025-11-25) length for one.
const MaxToolName = 128

// ownToolNames are the names of scratchpad-mcp's own tools besides the
// memory tool, in any mode (search_tools and call_tool are listed with
// [catalogue] mode = "search"): memory_tool may be none of them. A test
// of the binary holds this list to the tools the server offers.
var ownToolNames = []string{
	"head", "slice", "grep", "schema", "item_schema", "get_in", "iterate_over", "count_by", "read",
	"read_scratchpad", "update_scratchpad", "append_scratchpad",
	"read_artifact", "list_artifacts", "write_artifact",
	"search_tools", "call_tool",
	"view", "view_page",
}

// OwnToolNames returns the names of scratchpad-mcp's own tools that
// [Scratchpad].MemoryTool may not take.
func OwnToolNames() []string { return slices.Clone(ownToolNames) }

// memoryToolProblem says why s cannot name the memory tool, "" when it
// may: a tool name as MCP gives it (1 to 128 of A-Z a-z 0-9 _ - .), and
// not one of the server's other own tools. "" (no memory tool) may.
func memoryToolProblem(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > MaxToolName {
		return fmt.Sprintf("a tool name is at most %d characters", MaxToolName)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isBareKeyChar(c) && c != '.' {
			return `a tool name uses only A-Z a-z 0-9 _ - . (MCP's tool names); "" offers no memory tool`
		}
	}
	if slices.Contains(ownToolNames, s) {
		return `the name of another of scratchpad-mcp's own tools: pick another ("" offers no memory tool)`
	}
	return ""
}

// memoryPathProblem says why s cannot be a memory path, "" when it may:
// the common mistakes, caught here with the file and line; package
// memory's own check (memory.Clean) runs again when the server starts.
func memoryPathProblem(s string) string {
	const root = "/memories"
	switch {
	case s != root && !strings.HasPrefix(s, root+"/"):
		return "must start with " + root + "/ (the path as the model sees it, e.g. \"/memories/guidelines.md\")"
	case strings.Contains(s, "\\"):
		return "must not contain a backslash; folders are separated by /"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "must not contain control characters"
	}
	for _, e := range strings.Split(s, "/") {
		if e == ".." || strings.HasPrefix(e, ".") && e != "." {
			return "must not contain .. or names starting with \".\""
		}
	}
	return ""
}

// memoryDefaults fills what [memory] takes from [pad] when it does not
// say: its scope and its history.
func (c *Config) memoryDefaults() {
	if c.Memory.Scope == "" {
		c.Memory.Scope = c.Pad.Scope
	}
	if c.Memory.History == 0 {
		c.Memory.History = c.Pad.History
	}
}
