package budget

import (
	"errors"
	"testing"
)

func TestContextWindowFor(t *testing.T) {
	tests := []struct {
		model string
		want  int
		ok    bool
	}{
		{"gpt-5", 272_000, true},
		{"gpt-5-mini-2025-08-07", 272_000, true},
		{"gpt-5-chat-latest", 128_000, true},
		{"gpt-4o", 128_000, true},
		{"gpt-4o-mini", 128_000, true},
		{"GPT-4o-2024-08-06", 128_000, true},
		{"gpt-4.1-nano", 1_047_576, true},
		{"gpt-4", 8_192, true},
		{"gpt-4-0613", 8_192, true},
		{"gpt-4-turbo-2024-04-09", 128_000, true},
		{"gpt-4-32k", 32_768, true},
		{"gpt-3.5-turbo", 16_385, true},
		{"gpt-3.5-turbo-instruct", 4_096, true},
		{"o1", 200_000, true},
		{"o1-mini", 128_000, true},
		{"o3-mini-2025-01-31", 200_000, true},
		{"o4-mini", 200_000, true},
		{"claude-sonnet-4-20250514", 200_000, true},
		{"claude-3-5-haiku-latest", 200_000, true},
		{"claude-opus-4-1", 200_000, true},
		{"claude-2.0", 100_000, true},
		{"claude-2.1", 200_000, true},
		{"anthropic/claude-3.5-sonnet", 200_000, true},
		{"us.anthropic.claude-3-5-sonnet-20240620-v1:0", 200_000, true},
		{"claude-3-5-sonnet@20240620", 200_000, true},
		{"gemini-2.5-pro", 1_048_576, true},
		{"models/gemini-1.5-pro-002", 2_097_152, true},
		{"gemini-pro", 32_760, true},
		{"llama3.1:8b", 131_072, true},
		{"meta-llama/Llama-3.3-70B-Instruct", 131_072, true},
		{"llama-3-8b", 8_192, true},
		{"llama-4-scout", 131_072, true},
		{" gpt-4o ", 128_000, true},
		{"", 0, false},
		{"my-finetune", 0, false},
		{"anthropic/", 0, false},
		{"o", 0, false},
	}
	for _, tt := range tests {
		got, ok := ContextWindowFor(tt.model)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ContextWindowFor(%q) = %d, %v; want %d, %v", tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOptionsUsable(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		want    int
		wantErr error
	}{
		{"table and margin", Options{Model: "gpt-4o", SafetyMargin: 0.2}, 102_400, nil},
		{"explicit window wins", Options{Model: "gpt-4o", ContextWindow: 10_000, SafetyMargin: 0.2}, 8_000, nil},
		{"window without model", Options{ContextWindow: 1000, SafetyMargin: 0.2}, 800, nil},
		{"zero margin means none", Options{ContextWindow: 1000}, 1000, nil},
		{"negative margin", Options{ContextWindow: 1000, SafetyMargin: -1}, 0, ErrInvalidOptions},
		{"unknown model", Options{Model: "my-finetune"}, 0, ErrUnknownModel},
		{"zero value", Options{}, 0, ErrUnknownModel},
		{"margin of one", Options{ContextWindow: 1000, SafetyMargin: 1}, 0, ErrInvalidOptions},
		{"negative window", Options{ContextWindow: -5}, 0, ErrInvalidOptions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opts.Usable()
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("Usable() = %d, %v; want %d, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
