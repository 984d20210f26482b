package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// An exploration window shows masks, never a piece of a secret (issue
// 53): a file in the read root that holds a private key and a token (a
// file stored before redaction, or written by another tool) is scanned
// whole before any window of it is cut, so a slice that starts inside
// the key's body, or a count_by whose capture group takes a token's
// body, shows no piece of either.
func TestExplorationWindowsShowNoPieceOfASecret(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	r := rand.New(rand.NewPCG(7, 8))
	key := testsecrets.Plant(r, "private-key")
	tok := testsecrets.Plant(r, "github-pat")
	var b strings.Builder
	for i := range 20 {
		b.WriteString("filler line " + string(rune('a'+i)) + "\n")
	}
	b.WriteString(strings.ReplaceAll(key.Text, "\\n", "\n") + "\n")
	b.WriteString("token=" + tok.Secret + "\n")
	dir := filepath.Join(mem, "scratchpad")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "planted.txt"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := stdioSession(t, os.Environ(), binary(t), "serve", "--config", cfg)
	waitForTool(t, cs, "slice")
	bodyLine := ""
	for _, l := range strings.Split(strings.ReplaceAll(key.Text, "\\n", "\n"), "\n") {
		if len(l) > 40 && !strings.Contains(l, "-----") {
			bodyLine = l
			break
		}
	}
	answers := []string{
		callTool(t, cs, "slice", map[string]any{"file": "planted.txt", "start": 23, "end": 26}),
		callTool(t, cs, "count_by", map[string]any{"file": "planted.txt", "pattern": "token=ghp_(.*)"}),
		callTool(t, cs, "grep", map[string]any{"file": "planted.txt", "pattern": "token"}),
	}
	for i, a := range answers {
		if bodyLine != "" && strings.Contains(a, bodyLine[:30]) {
			t.Errorf("answer %d shows a line of the private key's body:\n%s", i, a)
		}
		if strings.Contains(a, tok.Secret[4:20]) {
			t.Errorf("answer %d shows the token's body:\n%s", i, a)
		}
	}
}
