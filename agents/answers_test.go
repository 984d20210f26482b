package agents

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// What an exploration tool answers is scanned (issue 37): a stored
// output that holds a credential (stored before redaction, or kept in
// flag mode) is answered masked in mask mode, with a footer and the
// agent's usage counting it; a file of a server in flag mode is answered
// as it is, the footer naming the kind and the file's line; a server
// with redaction off is answered as it is, nothing said.
func TestAnswersScanned(t *testing.T) {
	r0 := rand.New(rand.NewPCG(4, 2))
	pat := testsecrets.Plant(r0, "github-pat")
	log := "ok 1\nok 2\nuser token " + pat.Text + " in use\nok 4\n"

	cfg := config.Default()
	cfg.MemoryDir = t.TempDir()
	cfg.Servers = []config.Server{{Name: "k8s"}, {Name: "k8s-vault", Redaction: config.RedactOff}, {Name: "logs", Redaction: config.RedactFlag}}
	r := newMaskingRegistry(t, cfg)
	id := Identity{Agent: "main"}
	ag, err := r.Resolve(sessionCtx(t, r, "s1", id))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ag.ScratchpadDir, 0o700); err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(map[string]any{"items": []any{map[string]any{"name": "a", "token": pat.Text}}})
	for name, body := range map[string]string{
		"k8s-logs-00000001.txt":       log,
		"k8s-vault-read-00000002.txt": log,
		"logs-tail-00000003.txt":      log,
		"k8s-get-00000004.json":       string(doc),
	} {
		if err := os.WriteFile(filepath.Join(ag.ScratchpadDir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		tool   string
		args   map[string]any
		shown  bool   // the secret is in the answer
		footer string // the answer says it ("": says nothing)
	}{
		// The first answer over a file masks the file whole (a window
		// could cut a credential) and says so; the next ones read masks.
		{"head", map[string]any{"file": "k8s-logs-00000001.txt"}, false, "1 credential(s) masked in the stored file before this answer: github-pat ×1"},
		{"grep", map[string]any{"file": "k8s-logs-00000001.txt", "pattern": "token"}, false, ""},
		{"slice", map[string]any{"file": "k8s-logs-00000001.txt", "start": 2, "end": 4}, false, ""},
		{"get_in", map[string]any{"file": "k8s-get-00000004.json", "path": "$.items[0]"}, false, "masked in the stored file before this answer"},
		{"head", map[string]any{"file": "k8s-vault-read-00000002.txt"}, true, ""},
		{"head", map[string]any{"file": "logs-tail-00000003.txt"}, true, `shows 1 credential(s) as they are ([redaction] mode = "flag"): github-pat on line 3 of the file`},
		{"grep", map[string]any{"file": "logs-tail-00000003.txt", "pattern": "token"}, true, "github-pat on line 3 of the file"},
	} {
		text, isErr := callTool(t, r, "s1", id, tc.tool, tc.args)
		if isErr {
			t.Fatalf("%s %v: %s", tc.tool, tc.args, text)
		}
		if strings.Contains(text, pat.Text) != tc.shown {
			t.Errorf("%s %v: secret shown %v, want %v:\n%s", tc.tool, tc.args, !tc.shown, tc.shown, text)
		}
		if tc.footer != "" && !strings.Contains(text, tc.footer) || tc.footer == "" && strings.Contains(text, "scratchpad-mcp:") {
			t.Errorf("%s %v: answer %q, want it to say %q", tc.tool, tc.args, text, tc.footer)
		}
		if !tc.shown && !strings.Contains(text, "[REDACTED:github-pat:") {
			t.Errorf("%s %v: no mask in %q", tc.tool, tc.args, text)
		}
	}
	if got := ag.Budget.Usage().SecretsMasked["github-pat"]; got != 2 {
		t.Errorf("usage secrets_masked github-pat = %d, want 2 (the two files masked)", got)
	}
}
