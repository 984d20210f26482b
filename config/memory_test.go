package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// [memory]: off by default, its scope and history [pad]'s unless it says,
// every key decoded, and each mistake reported with file, key and line.
func TestMemory(t *testing.T) {
	c, err := Parse("t.toml", []byte(""), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Memory{Scope: ScopeAgent, History: DefaultPadHistory, MaxFileBytes: 64 << 10, MaxScopeBytes: 1 << 20, MaxFiles: 200, KeepDeleted: 200}
	if !reflect.DeepEqual(c.Memory, want) || !reflect.DeepEqual(Default().Memory, want) {
		t.Fatalf("defaults: %+v / %+v", c.Memory, Default().Memory)
	}
	c, err = Parse("t.toml", []byte("[pad]\nscope = \"run\"\nhistory = 7\n[memory]\nenabled = true\n"), testEnv(nil))
	if err != nil || c.Memory.Scope != ScopeRun || c.Memory.History != 7 || !c.Memory.Enabled {
		t.Fatalf("from [pad]: %+v, %v", c.Memory, err)
	}
	c, err = Parse("t.toml", []byte(`[pad]
scope = "run"
[memory]
enabled = true
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
	want = Memory{Enabled: true, Scope: ScopeAgent, MaxFileBytes: 16 << 10, MaxScopeBytes: 100000, MaxFiles: 50, History: 3, KeepDeleted: 9,
		TTL: 30 * 24 * time.Hour, ReadOnly: true, ReadOnlyPaths: []string{"/memories/policy.md", "/memories/guides/"}}
	if !reflect.DeepEqual(c.Memory, want) {
		t.Fatalf("got %+v\nwant %+v", c.Memory, want)
	}
	for _, tc := range []struct{ src, want string }{
		{`enabld = true`, `t.toml:2:1: memory.enabld: unknown key "enabld" (did you mean "enabled"?)`},
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
