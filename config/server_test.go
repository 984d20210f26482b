package config

import "testing"

func TestThresholdPrecedence(t *testing.T) {
	c, err := LoadWith("../testdata/config/valid/thresholds.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server("k8s")
	tests := []struct {
		tool   string
		want   int
		reason string
	}{
		{"list_pods", 1000, "exact name is the longest pattern"},
		{"list_nodes", 3000, "list_* beats *"},
		{"delete_pods", 2500, "*_pods beats *"},
		{"list_x_pods", 2500, "list_* and *_pods tie on length: the smaller wins"},
		{"get_pods", DefaultMinTokens, "{} means the default"},
		{"get_nod", DefaultMinTokens, "alternates and classes"},
		{"logs", 100, "l[!o]g? excludes logs, log? matches"},
		{"lags", 50, "l[!o]g? is longer than log?"},
		{"other", 9000, "only * matches"},
	}
	for _, tt := range tests {
		got, ok := s.Threshold(tt.tool)
		if !ok || got != tt.want {
			t.Errorf("Threshold(%q) = %d, %v; want %d (%s)", tt.tool, got, ok, tt.want, tt.reason)
		}
	}
	// Patterns match the upstream name, not the prefixed exposed one.
	if got, _ := s.Threshold(s.ExposedName("logs")); got != 9000 {
		t.Errorf("exposed name matched %d, want only * (9000)", got)
	}
}

func TestThresholdNoMatch(t *testing.T) {
	p, _ := CompilePattern("list_*")
	s := &Server{Thresholds: []Threshold{{Pattern: p, MinTokens: 10}}}
	if n, ok := s.Threshold("get_pods"); ok || n != 0 {
		t.Errorf("Threshold(unmatched) = %d, %v; want 0, false", n, ok)
	}
	if _, ok := (&Server{}).Threshold("x"); ok {
		t.Error("a server without thresholds intercepted a tool")
	}
	// A zero Pattern (e.g. a hand-built Threshold) matches nothing.
	z := &Server{Thresholds: []Threshold{{MinTokens: 1}}}
	if _, ok := z.Threshold(""); ok {
		t.Error("zero Pattern matched")
	}
}

func TestAllowedAndExposedName(t *testing.T) {
	c, err := LoadWith("../testdata/config/valid/thresholds.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server("k8s")
	for tool, want := range map[string]bool{
		"list_pods": true, "list_": true, "get_pod": true, "get_node": true,
		"get_nodes": false, "logs": true, "delete_pod": false, "": false,
	} {
		if got := s.Allowed(tool); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", tool, got, want)
		}
	}
	if got := s.ExposedName("list_pods"); got != "k8s__list_pods" {
		t.Errorf("ExposedName = %q", got)
	}
	if got := (&Server{}).ExposedName("list_pods"); got != "list_pods" {
		t.Errorf("ExposedName without prefix = %q", got)
	}
}

func BenchmarkThreshold(b *testing.B) {
	c, err := LoadWith("../testdata/config/valid/thresholds.toml", testEnv(nil))
	if err != nil {
		b.Fatal(err)
	}
	s := c.Server("k8s")
	b.ReportAllocs()
	for b.Loop() {
		s.Threshold("list_namespaced_pods")
	}
}

func TestThresholdNoAlloc(t *testing.T) {
	c, err := LoadWith("../testdata/config/valid/thresholds.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Server("k8s")
	if n := testing.AllocsPerRun(100, func() {
		s.Threshold("list_namespaced_pods")
		s.Allowed("get_node")
	}); n != 0 {
		t.Errorf("Threshold/Allowed allocate %.1f times per call", n)
	}
}

// An alternate counts with the expansion that matched, so braces do not
// make a pattern more specific than the plain name they spell.
func TestThresholdAlternateLength(t *testing.T) {
	tests := []struct {
		table string
		tool  string
		want  int
	}{
		{`"{get,list}_pods" = 100` + "\n" + `list_pods = 200`, "list_pods", 100},         // tie at 9: smaller
		{`"{get,list}_pods" = 300` + "\n" + `list_pods = 200`, "list_pods", 200},         // tie at 9: smaller
		{`"{a,bbbbbbbb}*" = 1` + "\n" + `"a_*" = 2`, "a_x", 2},                           // a* (2) < a_* (3)
		{`"{a,bbbbbbbb}*" = 1` + "\n" + `"b*" = 2`, "bbbbbbbbx", 1},                      // bbbbbbbb* (9) > b* (2)
		{`"{list,get}_*" = 7` + "\n" + `"*" = 1` + "\n" + `"*_pods" = 5`, "get_pods", 5}, // *_pods (6) beats get_* (5)
	}
	for _, tt := range tests {
		src := "[mcp.servers.a]\ncmd = \"x\"\n[mcp.servers.a.scratchpad]\n" + tt.table + "\n"
		c, err := Parse("t.toml", []byte(src), testEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Servers[0].Threshold(tt.tool); !ok || got != tt.want {
			t.Errorf("%s\nThreshold(%q) = %d, %v; want %d", tt.table, tt.tool, got, ok, tt.want)
		}
	}
}

// TestAppDataBytes: max_app_data_bytes as the proxy reads it: unset is
// the default, 0 in the file keeps none, any other value is the bound.
func TestAppDataBytes(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       int
	}{
		{"unset", "", DefaultMaxAppDataBytes},
		{"zero", "max_app_data_bytes = 0", 0},
		{"set", "max_app_data_bytes = 1024", 1024},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("t.toml", []byte("[mcp.servers.a]\ncmd='x'\n"+tt.line), testEnv(nil))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Servers[0].AppDataBytes(); got != tt.want {
				t.Errorf("AppDataBytes = %d, want %d", got, tt.want)
			}
		})
	}
}
