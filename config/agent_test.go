package config

import (
	"reflect"
	"testing"
)

func TestAgentFor(t *testing.T) {
	c, err := LoadWith("../testdata/config/valid/workers.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	base := Agent{
		Model: "claude-sonnet-4-5", Provider: "anthropic", ContextWindow: 200000,
		Scratchpad: Scratchpad{Enabled: true, ContextSafetyMargin: 0.25, MaxExtractionTokens: 8000, TurnDepthBonus: 4, ResultView: ViewText, MemoryTool: DefaultMemoryTool},
	}
	tests := []struct {
		worker string
		want   func(a Agent) Agent
	}{
		{"", func(a Agent) Agent { return a }},
		{"unknown", func(a Agent) Agent { return a }},
		{"small", func(a Agent) Agent {
			// Only max_extraction_tokens changes; enabled stays true.
			a.Scratchpad.MaxExtractionTokens = 2000
			return a
		}},
		{"mini", func(a Agent) Agent {
			a.Model, a.Provider = "gpt-4.1-mini", "openai"
			a.ContextWindow = 0 // another model: its window comes from the model table
			a.Scratchpad.Enabled = false
			a.Scratchpad.ContextSafetyMargin = 0 // an explicit 0 overrides
			return a
		}},
		{"narrow", func(a Agent) Agent {
			a.ContextWindow = 50000
			return a
		}},
	}
	for _, tt := range tests {
		t.Run(tt.worker, func(t *testing.T) {
			if got, want := c.AgentFor(tt.worker), tt.want(base); !reflect.DeepEqual(got, want) {
				t.Errorf("AgentFor(%q):\n got %+v\nwant %+v", tt.worker, got, want)
			}
		})
	}
	if !reflect.DeepEqual(c.Agent, base) {
		t.Errorf("AgentFor modified [agent]: %+v", c.Agent)
	}
}

func TestAgentForSameModelKeepsWindow(t *testing.T) {
	src := "[agent]\nmodel = \"m\"\ncontext_window = 1000\n[orchestration.worker.w]\nmodel = \"m\"\n"
	c, err := Parse("t.toml", []byte(src), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.AgentFor("w").ContextWindow; got != 1000 {
		t.Errorf("ContextWindow = %d, want the agent's 1000 (same model)", got)
	}
}
