package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultMemoryDir(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	tests := []struct {
		name string
		env  map[string]string
		home func() (string, error)
		want string
	}{
		{"xdg", map[string]string{"XDG_DATA_HOME": "/data"}, home, "/data/scratchpad-mcp"},
		{"relative xdg ignored", map[string]string{"XDG_DATA_HOME": "rel"}, home, "/home/u/.local/share/scratchpad-mcp"},
		{"home", nil, home, "/home/u/.local/share/scratchpad-mcp"},
		{"no home", nil, noHome, filepath.Join(os.TempDir(), "scratchpad-mcp")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			if got := defaultConfig(lookup, tt.home).MemoryDir; got != tt.want {
				t.Errorf("MemoryDir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if c.Path != "" || len(c.Servers) != 0 || !filepath.IsAbs(c.MemoryDir) {
		t.Errorf("Default: %+v", c)
	}
	s := c.Agent.Scratchpad
	if !s.Enabled || s.ContextSafetyMargin != 0.20 || s.MaxExtractionTokens != 10000 || s.TurnDepthBonus != 6 {
		t.Errorf("scratchpad defaults: %+v", s)
	}
	p := c.Pad
	if !p.Enabled || p.Scope != ScopeAgent || p.Render != RenderMarkdown || p.Format != FormatMarkdown || p.History != 20 || p.Sections != nil {
		t.Errorf("pad defaults: %+v", p)
	}
	if c.HTTP.Addr != "127.0.0.1:8931" || c.Explore.CacheBytes != 256<<20 || c.Orchestration.Workers == nil {
		t.Errorf("defaults: %+v", c)
	}
	// Each call is independent: callers may modify their copy.
	c.Orchestration.Workers["x"] = Worker{}
	if len(Default().Orchestration.Workers) != 0 {
		t.Error("Default shares state between calls")
	}
}
