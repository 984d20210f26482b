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

func TestTokensCommand(t *testing.T) {
	cjk := filepath.Join("..", "..", "testdata", "tokens", "cjk.txt")
	emoji := filepath.Join("..", "..", "testdata", "tokens", "emoji.txt")
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Counts recorded from tiktoken (testdata/tokens/counts.json).
		{[]string{"tokens", "--encoding", "cl100k_base", cjk}, "3420\t" + cjk + "\n"},
		{[]string{"tokens", "--model", "gpt-4o", cjk}, "2320\t" + cjk + "\n"},
		{[]string{"tokens", "--model", "gpt-4", cjk}, "3420\t" + cjk + "\n"},
		// Anthropic: ceil(cl100k × 1.1).
		{[]string{"tokens", "--model", "claude-sonnet-4", cjk, emoji}, "3762\t" + cjk + "\n3630\t" + emoji + "\n7392\ttotal\n"},
		// Gemini: Gemma 3, recorded from the JS Gemma 3 tokenizer.
		{[]string{"tokens", "--encoding", "gemma3", cjk}, "2020\t" + cjk + "\n"},
		{[]string{"tokens", "--model", "gemini-2.5-pro", cjk}, "2020\t" + cjk + "\n"},
		{[]string{"tokens", "--provider", "vertex", "--model", "some-endpoint", emoji}, "1830\t" + emoji + "\n"},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("%v: exit %d\n%q\nwant %q\n%s", tc.args, code, out, tc.want, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "tokens", "--encoding", "nope", cjk); code != 2 || !strings.Contains(errOut, `unknown encoding "nope"`) {
		t.Errorf("unknown encoding: %d %s", code, errOut)
	}
	// An unknown model is refused (exit 2), naming the known models and the
	// encodings, instead of counting silently with o200k_base.
	for _, args := range [][]string{
		{"tokens", "--model", "gpt-9000", cjk},
		{"tokens", "--provider", "openai", "--model", "davinci-003", cjk},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, `unknown model "`) {
			t.Errorf("%v: exit %d\n%q\n%s", args, code, out, errOut)
		}
		for _, want := range []string{"gpt-4o*", "claude*", "gemini*", "o200k_base", "cl100k_base", "gemma3"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: error lacks %q: %s", args, want, errOut)
			}
		}
	}
	if code, _, errOut := runCLI(t, "tokens", "/nonexistent/file"); code != 1 || !strings.Contains(errOut, "/nonexistent/file") {
		t.Errorf("missing file: %d %s", code, errOut)
	}
}

func TestExploreCommand(t *testing.T) {
	file := filepath.Join("..", "..", "testdata", "explore", "nested.json")
	code, out, errOut := runCLI(t, "explore", file, "iterate_over", "path=$.results", "fields=id,metadata.name", "limit=2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{`{"_index":0,"id":1,"metadata.name":"item-1"}`, `{"_index":1,"id":2,"metadata.name":"item-2"}`, "items [0..2) of 12 total"} {
		if !strings.Contains(out, want) {
			t.Errorf("explore output lacks %q:\n%s", want, out)
		}
	}
	// A structured error is printed as the model would see it, with exit 1.
	code, out, _ = runCLI(t, "explore", file, "get_in", "path=$.results[0].nope")
	if code != 1 || !strings.Contains(out, `"error":"key_path_not_found"`) {
		t.Errorf("missing key: exit %d\n%s", code, out)
	}
	// The per-call cap applies as in the server.
	code, out, _ = runCLI(t, "explore", "--max-tokens", "20", file, "read")
	if code != 1 || !strings.Contains(out, `"error":"read_too_large"`) {
		t.Errorf("over cap: exit %d\n%s", code, out)
	}
}
