package agents

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// What the pad and artifact tools write holds no credential (issue 37):
// in mask mode a coordinator's artifact, a ledger note and a keyed value
// carrying planted secrets are stored masked, every file under
// memory_dir is free of them, and each answer says what was masked; in
// flag mode they are written as given and the answer says so; with no
// redactor, as given and nothing said.
func TestWritesMasked(t *testing.T) {
	r0 := rand.New(rand.NewPCG(1, 37))
	slack := testsecrets.Plant(r0, "slack-bot-token")
	aws := testsecrets.Plant(r0, "aws-access-token")
	pem := testsecrets.Plant(r0, "private-key")
	for _, tc := range []struct {
		mode   redact.Mode // "": no redactor
		stored bool        // the secrets are on disk afterwards
		says   string
	}{
		{redact.Mask, false, "masked before writing"},
		{redact.Flag, true, `written as they are`},
		{"", true, ""},
	} {
		t.Run("mode="+string(tc.mode), func(t *testing.T) {
			cfg := config.Default()
			cfg.MemoryDir = t.TempDir()
			opts := Options{Config: cfg}
			if tc.mode != "" {
				red, err := redact.New(redact.Options{Mode: tc.mode})
				if err != nil {
					t.Fatal(err)
				}
				opts.Redactor = red
			}
			r, err := NewRegistry(opts)
			if err != nil {
				t.Fatal(err)
			}
			coord := Identity{Agent: "coord", Role: RoleCoordinator, Run: "r1"}
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"write_artifact", map[string]any{"filename": "plan.md", "content": "# plan\n" + pem.Text + "\n"}},
				{"append_scratchpad", map[string]any{"note": "the bot uses " + slack.Text}},
				{"update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": aws.Text}}}},
			} {
				text, isErr := callTool(t, r, "s1", coord, c.tool, c.args)
				if isErr {
					t.Fatalf("%s: %s", c.tool, text)
				}
				if tc.says != "" && !strings.Contains(text, tc.says) || tc.says == "" && strings.Contains(text, "scratchpad-mcp:") {
					t.Errorf("%s answered %q, want it to say %q", c.tool, text, tc.says)
				}
			}
			ag, err := r.Resolve(sessionCtx(t, r, "s1", coord))
			if err != nil {
				t.Fatal(err)
			}
			masked := ag.Budget.Usage().SecretsMasked
			if want := tc.mode == redact.Mask; want != (len(masked) == 3 && masked["slack-bot-token"] == 1) {
				t.Errorf("usage secrets_masked %v (mode %q)", masked, tc.mode)
			}
			found := map[string]bool{}
			_ = filepath.WalkDir(cfg.MemoryDir, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, _ := os.ReadFile(path)
				for _, p := range []testsecrets.Planted{slack, aws, pem} {
					if strings.Contains(string(b), p.Secret) {
						found[p.Kind] = true
					}
				}
				return nil
			})
			if tc.stored != (len(found) == 3) || !tc.stored && len(found) > 0 {
				t.Errorf("secrets on disk: %v, want all three %v", found, tc.stored)
			}
		})
	}
}
