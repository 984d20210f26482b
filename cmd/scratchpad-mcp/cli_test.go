package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

func TestPadWithConfig(t *testing.T) {
	cfg, mem := writeConfig(t, "\n[pad]\nscope = \"run\"\n")
	code, out, errOut := runCLI(t, "pad", "show", "--config", cfg)
	if code != 0 || !strings.Contains(out, "Task") {
		t.Fatalf("pad show --config: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(mem, "pad")); !os.IsNotExist(err) {
		t.Errorf("show created the pad directory")
	}
	if code, _, errOut := runCLI(t, "pad", "show", "--config", cfg, "--run", "../x"); code != 2 || !strings.Contains(errOut, "run") {
		t.Errorf("hostile --run accepted: %d %s", code, errOut)
	}
	if code, _, _ := runCLI(t, "pad", "show", "--config", cfg, "--dir", mem); code != 2 {
		t.Errorf("--dir with --config accepted")
	}
}

func TestUsageWithConfig(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"event":"scratchpad_usage","agent_id":"a-1","agent_name":"alice","role":"worker","run_id":"r1","session_id":"s","tokens_intercepted":1200,"tokens_extracted":300,"calls":4,"time":"2026-11-30T10:00:00Z"}` + "\n"
	if err := os.WriteFile(filepath.Join(mem, "usage.jsonl"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "usage", "--config", cfg)
	if code != 0 || !strings.Contains(out, "alice") || !strings.Contains(out, "1,200") && !strings.Contains(out, "1200") {
		t.Fatalf("usage --config: %d\n%s\n%s", code, out, errOut)
	}
}

func TestVersionAndUnknownCommand(t *testing.T) {
	if code, out, _ := runCLI(t, "version"); code != 0 || !strings.HasPrefix(out, "scratchpad-mcp ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %d %q", code, errOut)
	}
}
