package config

import (
	"strings"
	"time"
	"unicode"
)

// Memory is [memory]: the memory tool (package memory), models' own
// memory directory /memories, kept on the pad's storage (files by
// default, Redis with [pad] backend = "redis").
type Memory struct {
	Enabled bool // default false: the tool is not offered
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

func (d *decoder) memory(p keyPath, v any, mc *Memory) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "enabled", "scope", "max_file_bytes", "max_scope_bytes", "max_files", "history", "keep_deleted", "ttl", "read_only", "read_only_paths")
	if v, ok := m["enabled"]; ok {
		mc.Enabled, _ = d.boolean(p.key("enabled"), v)
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
