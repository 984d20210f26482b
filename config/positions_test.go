package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestScanPositions(t *testing.T) {
	src := `# comment with [brackets] and key = "value"
top = 1
memory_dir = """
[not.a.table]
fake = 1
"""
lit = '''
[also.not] '''
str = "a # not a comment [x]"   # real comment

[mcp.servers.k8s]   # header comment
cmd = ["a", 'b',
  "c"]
  env.HOME = "/h"
"quoted.key" = { min_tokens = 5, nested = { x = 1 } }
'single' = [{ a = 1 }, { b = [2, 3] }]
ts = 1979-05-27 07:32:00Z

[ mcp . servers . "we ird" ]
x = 1

[[pad.sections]]
name = "A"

[[pad.sections]]
name = "B"
[[pad.sections.sub]]
y = 1

[[pad.sections]]
  name = "ü"
`
	ps := scanPositions(src)
	k := func(keys ...any) keyPath {
		var p keyPath
		for _, x := range keys {
			switch v := x.(type) {
			case string:
				p = p.key(v)
			case int:
				p = p.index(v)
			}
		}
		return p
	}
	tests := []struct {
		path      keyPath
		line, col int
		quoted    bool
	}{
		{k("top"), 2, 1, false},
		{k("memory_dir"), 3, 1, false},
		{k("lit"), 7, 1, false},
		{k("str"), 9, 1, false},
		{k("mcp"), 11, 2, false},
		{k("mcp", "servers"), 11, 6, false},
		{k("mcp", "servers", "k8s"), 11, 14, false},
		{k("mcp", "servers", "k8s", "cmd"), 12, 1, false},
		{k("mcp", "servers", "k8s", "env"), 14, 3, false},
		{k("mcp", "servers", "k8s", "env", "HOME"), 14, 7, false},
		{k("mcp", "servers", "k8s", "quoted.key"), 15, 1, true},
		{k("mcp", "servers", "k8s", "quoted.key", "min_tokens"), 15, 18, false},
		{k("mcp", "servers", "k8s", "quoted.key", "nested", "x"), 15, 45, false},
		{k("mcp", "servers", "k8s", "single"), 16, 1, true},
		{k("mcp", "servers", "k8s", "single", 1, "b"), 16, 26, false},
		{k("mcp", "servers", "k8s", "ts"), 17, 1, false},
		{k("mcp", "servers", "we ird"), 19, 19, true},
		{k("mcp", "servers", "we ird", "x"), 20, 1, false},
		{k("pad", "sections", 0), 22, 7, false},
		{k("pad", "sections", 0, "name"), 23, 1, false},
		{k("pad", "sections", 1, "name"), 26, 1, false},
		{k("pad", "sections", 1, "sub", 0, "y"), 28, 1, false},
		{k("pad", "sections", 2, "name"), 31, 3, false},
	}
	for _, tt := range tests {
		pos, exact := ps.key(tt.path)
		if !exact || pos.Line != tt.line || pos.Col != tt.col || pos.Quoted != tt.quoted {
			t.Errorf("%s: got %d:%d quoted=%v exact=%v, want %d:%d quoted=%v",
				tt.path, pos.Line, pos.Col, pos.Quoted, exact, tt.line, tt.col, tt.quoted)
		}
	}
	values := []struct {
		path      keyPath
		line, col int
	}{
		{k("mcp", "servers", "k8s", "cmd", 0), 12, 8},
		{k("mcp", "servers", "k8s", "cmd", 1), 12, 13},
		{k("mcp", "servers", "k8s", "cmd", 2), 13, 3},
		{k("pad", "sections", 2, "name"), 31, 10},
	}
	for _, tt := range values {
		pos, ok := ps.value(tt.path)
		if !ok || pos.Line != tt.line || pos.Col != tt.col {
			t.Errorf("value %s: got %d:%d (%v), want %d:%d", tt.path, pos.Line, pos.Col, ok, tt.line, tt.col)
		}
	}
	// Keys inside strings are not keys.
	for _, p := range []keyPath{k("not"), k("fake"), k("also")} {
		if _, exact := ps.key(p); exact {
			t.Errorf("%s found inside a string", p)
		}
	}
	// An unknown child falls back to its nearest known parent.
	if pos, exact := ps.key(k("mcp", "servers", "k8s", "nope")); exact || pos.Line != 11 {
		t.Errorf("fallback: %+v exact=%v", pos, exact)
	}
}

// Every key of every fixture must get an exact position: that is what
// makes error messages point at the right line.
func TestScanPositionsFixtures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/config/valid/*.toml")
	files = append(files, "../testdata/scratchpad.example.toml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ps := scanPositions(string(data))
		var raw map[string]any
		if _, err := tomlDecode(string(data), &raw); err != nil {
			t.Fatal(err)
		}
		var walk func(p keyPath, v any)
		walk = func(p keyPath, v any) {
			if len(p) > 0 {
				if _, exact := ps.key(p); !exact {
					if _, ok := ps.value(p); !ok {
						t.Errorf("%s: no position for %s", f, p)
					}
				}
			}
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					walk(p.key(k), e)
				}
			case []map[string]any:
				for i, e := range x {
					walk(p.index(i), e)
				}
			case []any:
				for i, e := range x {
					walk(p.index(i), e)
				}
			}
		}
		walk(nil, raw)
	}
}

func TestKeyPathString(t *testing.T) {
	p := keyPath{}.key("mcp").key("servers").key("my server").key("scratchpad").key("list_[pods").key("x")
	if got, want := p.String(), `mcp.servers."my server".scratchpad."list_[pods".x`; got != want {
		t.Errorf("String = %s, want %s", got, want)
	}
	q := keyPath{}.key("pad").key("sections").index(2).key("name")
	if got := q.String(); got != "pad.sections[2].name" {
		t.Errorf("String = %s", got)
	}
	if e := (keyPath{}).key(""); e.String() != `""` {
		t.Error("empty key not quoted")
	}
	// canon must not confuse a key "[0]" with an index.
	a, b := keyPath{}.key("a").key("[0]"), keyPath{}.key("a").index(0)
	if a.canon() == b.canon() {
		t.Error("canon collision")
	}
}
