package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// [memory]: its scope and history [pad]'s unless it says, every key
// decoded, and each mistake reported with file, key and line.
func TestMemory(t *testing.T) {
	c, err := Parse("t.toml", []byte(""), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{Scope: ScopeAgent, History: DefaultPadHistory, MaxFileBytes: 64 << 10, MaxScopeBytes: 1 << 20, MaxFiles: 200, KeepDeleted: 200}
	if !reflect.DeepEqual(c.Memory, want) || !reflect.DeepEqual(Default().Memory, want) {
		t.Fatalf("defaults: %+v / %+v", c.Memory, Default().Memory)
	}
	c, err = Parse("t.toml", []byte("[pad]\nscope = \"run\"\nhistory = 7\n[memory]\nmax_files = 9\n"), testEnv(nil))
	if err != nil || c.Memory.Scope != ScopeRun || c.Memory.History != 7 {
		t.Fatalf("from [pad]: %+v, %v", c.Memory, err)
	}
	c, err = Parse("t.toml", []byte(`[pad]
scope = "run"
[memory]
scope = "agent"
max_file_bytes = "16KiB"
max_scope_bytes = 100000
max_files = 50
history = 3
keep_deleted = 9
ttl = "30d"
read_only = true
read_only_paths = ["/memories/policy.md", "/memories/guides/"]
`), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want = Memory{Scope: ScopeAgent, MaxFileBytes: 16 << 10, MaxScopeBytes: 100000, MaxFiles: 50, History: 3, KeepDeleted: 9,
		TTL: 30 * 24 * time.Hour, ReadOnly: true, ReadOnlyPaths: []string{"/memories/policy.md", "/memories/guides/"}}
	if !reflect.DeepEqual(c.Memory, want) {
		t.Fatalf("got %+v\nwant %+v", c.Memory, want)
	}
	for _, tc := range []struct{ src, want string }{
		{`scop = "run"`, `t.toml:2:1: memory.scop: unknown key "scop" (did you mean "scope"?)`},
		{`enabled = "yes"`, `t.toml:2:1: memory.enabled: want true or false, got string`},
		{`scope = "owner"`, `t.toml:2:1: memory.scope:`},
		{`max_file_bytes = 0`, `t.toml:2:1: memory.max_file_bytes: 0 B out of range [1 B, 16.0 MiB]`},
		{`max_file_bytes = "1GB"`, `memory.max_file_bytes: 953.7 MiB out of range`},
		{`max_file_bytes = "lots"`, `memory.max_file_bytes: invalid size "lots"`},
		{"max_file_bytes = 5000\nmax_scope_bytes = 4000", `t.toml:3:1: memory.max_scope_bytes: 3.9 KiB is less than max_file_bytes (4.9 KiB)`},
		{`max_files = 0`, `t.toml:2:1: memory.max_files:`},
		{`history = 0`, `memory.history:`},
		{`ttl = "soon"`, `memory.ttl: invalid age "soon"`},
		{`read_only_paths = "/memories/a"`, `memory.read_only_paths: want an array`},
		{`read_only_paths = ["/memories/ok.md", "policy.md"]`, `t.toml:2:1: memory.read_only_paths[1]: "policy.md": must start with /memories/`},
		{`read_only_paths = ["/memories/../etc"]`, `memory.read_only_paths[0]: "/memories/../etc": must not contain ..`},
		{`read_only_paths = ["/memories\\a"]`, `must start with /memories/`},
		{`read_only_paths = ["/memories/a\\b"]`, `must not contain a backslash`},
	} {
		_, err := Parse("t.toml", []byte("[memory]\n"+tc.src+"\n"), testEnv(nil))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// The memory tool is on by default, named memory; [agent.scratchpad]
// memory_tool renames it or ("") turns it off, and a worker's
// .scratchpad table may do either for that worker alone. A name must be
// an MCP tool name and not another own tool's; each refusal names file,
// key and line.
func TestMemoryTool(t *testing.T) {
	c, err := Parse("t.toml", []byte(""), testEnv(nil))
	if err != nil || c.Agent.Scratchpad.MemoryTool != "memory" || Default().Agent.Scratchpad.MemoryTool != "memory" || len(c.Deprecated) != 0 {
		t.Fatalf("default: %q, %q, %v, %v", c.Agent.Scratchpad.MemoryTool, Default().Agent.Scratchpad.MemoryTool, c.Deprecated, err)
	}
	c, err = Parse("t.toml", []byte(`[agent.scratchpad]
memory_tool = "scratchpad_memory"

[orchestration.worker.quiet.scratchpad]
memory_tool = ""

[orchestration.worker.other.scratchpad]
memory_tool = "notes.v2"

[orchestration.worker.same.scratchpad]
max_extraction_tokens = 5
`), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	for worker, want := range map[string]string{"": "scratchpad_memory", "quiet": "", "other": "notes.v2", "same": "scratchpad_memory", "unknown": "scratchpad_memory"} {
		if got := c.AgentFor(worker).Scratchpad.MemoryTool; got != want {
			t.Errorf("worker %q: memory_tool %q, want %q", worker, got, want)
		}
	}
	c, err = Parse("t.toml", []byte("[agent.scratchpad]\nmemory_tool = \"\"\n[orchestration.worker.w.scratchpad]\nmemory_tool = \"memory\"\n"), testEnv(nil))
	if err != nil || c.AgentFor("main").Scratchpad.MemoryTool != "" || c.AgentFor("w").Scratchpad.MemoryTool != "memory" {
		t.Fatalf("off but for w: %+v %v", c.Agent.Scratchpad, err)
	}
	for _, tc := range []struct{ src, want string }{
		{"[agent.scratchpad]\nmemory_tool = \"my memory\"", `t.toml:2:1: agent.scratchpad.memory_tool: "my memory": a tool name uses only A-Z a-z 0-9 _ - . (MCP's tool names); "" offers no memory tool`},
		{"[agent.scratchpad]\nmemory_tool = \"mémoire\"", `agent.scratchpad.memory_tool: "mémoire": a tool name uses only`},
		{"[agent.scratchpad]\nmemory_tool = \"" + strings.Repeat("m", 129) + "\"", `agent.scratchpad.memory_tool: "mmm` + strings.Repeat("m", 126) + `": a tool name is at most 128 characters`},
		{"[agent.scratchpad]\nmemory_tool = \"read_scratchpad\"", `t.toml:2:1: agent.scratchpad.memory_tool: "read_scratchpad": the name of another of scratchpad-mcp's own tools: pick another ("" offers no memory tool)`},
		{"[agent.scratchpad]\nmemory_tool = \"search_tools\"", `"search_tools": the name of another of scratchpad-mcp's own tools`},
		{"[agent.scratchpad]\nmemory_tool = false", `t.toml:2:1: agent.scratchpad.memory_tool: want a string`},
		{"[orchestration.worker.w.scratchpad]\nmemory_tool = \"grep\"", `t.toml:2:1: orchestration.worker.w.scratchpad.memory_tool: "grep": the name of another`},
		{"[agent.scratchpad]\nmemory_tool = \"memory\"\n[memory]\nenabled = true", `t.toml:4:1: memory.enabled: replaced by [agent.scratchpad] memory_tool, which this file sets too: remove memory.enabled`},
		{"[memory]\nenabled = \"no\"", `t.toml:2:1: memory.enabled: want true or false, got string`},
	} {
		_, err := Parse("t.toml", []byte(tc.src+"\n"), testEnv(nil))
		if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// [memory] enabled, deprecated, still works: false turns the tool off
// ([agent.scratchpad]'s; a worker that names its own keeps it), true is
// the default; both are reported in Deprecated with file, key and line.
func TestMemoryEnabledDeprecated(t *testing.T) {
	c, err := Parse("t.toml", []byte("[orchestration.worker.w.scratchpad]\nmemory_tool = \"mem\"\n\n[memory]\nenabled = false\n"), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.AgentFor("main").Scratchpad.MemoryTool; got != "" {
		t.Errorf("enabled = false: memory_tool %q", got)
	}
	if got := c.AgentFor("w").Scratchpad.MemoryTool; got != "mem" {
		t.Errorf("enabled = false, worker w's own name: %q", got)
	}
	if want := `t.toml:5:1: memory.enabled: deprecated: write memory_tool = "" in [agent.scratchpad] instead`; len(c.Deprecated) != 1 || !strings.HasPrefix(c.Deprecated[0], want) {
		t.Errorf("deprecated %q, want %q…", c.Deprecated, want)
	}
	c, err = Parse("t.toml", []byte("[memory]\nenabled = true\n"), testEnv(nil))
	if err != nil || c.Agent.Scratchpad.MemoryTool != "memory" || len(c.Deprecated) != 1 || !strings.Contains(c.Deprecated[0], "t.toml:2:1: memory.enabled: deprecated and ignored") {
		t.Errorf("enabled = true: %q %q %v", c.Agent.Scratchpad.MemoryTool, c.Deprecated, err)
	}
}
