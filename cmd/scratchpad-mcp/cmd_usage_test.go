package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsageCommand(t *testing.T) {
	mem := t.TempDir()
	data, err := os.ReadFile("../../testdata/budget/usage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, "usage.jsonl"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
		absent   []string
	}{
		{"all runs", []string{"--memory-dir", mem}, 0, []string{"coordinator", "run-8", "TOTAL  4 agents"}, nil},
		{"one run", []string{"--memory-dir", mem, "--run", "run-7"}, 0, []string{"researcher", "1,204,566", "TOTAL  2 agents"}, []string{"run-8"}},
		{"unknown run", []string{"--memory-dir", mem, "--run", "nope"}, 0, []string{`no usage recorded for run "nope"`}, nil},
		{"no file", []string{"--memory-dir", filepath.Join(mem, "empty")}, 0, []string{"no usage recorded yet"}, nil},
		{"bad flag", []string{"--bogus"}, 2, nil, nil},
		{"stray argument", []string{"--memory-dir", mem, "extra"}, 2, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(append([]string{"usage"}, tt.args...), nil, &out, &errb)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errb.String())
			}
			for _, s := range tt.contains {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out.String(), s) {
					t.Errorf("output has %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// TestUsageNamesOwners: with bearer tokens the records are per owner, so
// usage without --owner names the owners that have records instead of
// saying nothing was recorded.
func TestUsageNamesOwners(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	data, err := os.ReadFile("../../testdata/budget/usage.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for owner, content := range map[string][]byte{"bob": data, "alice": data, "carol": nil} {
		dir := filepath.Join(mem, "owners", owner)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if content != nil {
			if err := os.WriteFile(filepath.Join(dir, "usage.jsonl"), content, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name     string
		args     []string
		contains []string
		absent   []string
	}{
		{"no owner", []string{"--config", cfg}, []string{"owners with records: alice, bob.", "--owner alice"}, []string{"carol", "no usage recorded yet"}},
		{"one owner", []string{"--config", cfg, "--owner", "bob"}, []string{"TOTAL  4 agents"}, []string{"owners with records"}},
		{"owner without records", []string{"--config", cfg, "--owner", "carol"}, []string{"no usage recorded yet"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"usage"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, s := range tc.contains {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(out, s) {
					t.Errorf("output has %q:\n%s", s, out)
				}
			}
		})
	}
}
