package e2e

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// TestRedactionWithServerFilesystem plants a credential of every default
// kind in a small config dump and throughout a 3,000-line log, and reads
// both through the proxy from the real server-filesystem (issue 37):
// with the default mode none of them is in the passed-through text, in
// any file the proxy wrote, in a head or grep answer over the stored log,
// or in the pad after the model wrote two of them to it, and the pointer
// and the result's _meta count them by kind; with mode = "off" the same
// bytes pass.
func TestRedactionWithServerFilesystem(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and server-filesystem)")
	}
	f := &fixture{node: requireNode(t)}
	f.fsEntry = ensureNodeModules(t)
	f.bin = buildServer(t)
	f.dataDir = t.TempDir()
	r := rand.New(rand.NewPCG(37, 1))
	var secrets []testsecrets.Planted
	var dump strings.Builder
	for i, k := range testsecrets.Kinds {
		p := testsecrets.Plant(r, k)
		secrets = append(secrets, p)
		fmt.Fprintf(&dump, "SETTING_%d=%d\nREGION=eu-west-1\n%s\n", i, r.IntN(1000), p.Text)
	}
	var log strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&log, "2026-12-02T10:%02d:%02d.%03dZ INFO request id=%s path=/api/v1/items/%d status=200 took=%dms\n",
			i/60%60, i%60, i%1000, testsecrets.RandString(r, "0123456789abcdef", 16), r.IntN(1e6), r.IntN(900))
		if i%150 == 75 {
			p := testsecrets.Plant(r, testsecrets.Kinds[(i/150)%len(testsecrets.Kinds)])
			secrets = append(secrets, p)
			fmt.Fprintf(&log, "2026-12-02T10:00:00.000Z WARN leaked %s\n", p.Text)
		}
	}
	for name, text := range map[string]string{"config.env": dump.String(), "app.log": log.String()} {
		if err := os.WriteFile(filepath.Join(f.dataDir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	leaked := func(text string) []string {
		var out []string
		for _, p := range secrets {
			if strings.Contains(text, p.Secret) {
				out = append(out, p.Kind)
			}
		}
		return out
	}

	for _, mode := range []string{"mask", "off", "flag"} {
		t.Run(mode, func(t *testing.T) {
			cfg, mem := f.config(t)
			b, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(cfg, append(b, fmt.Sprintf("\n[redaction]\nmode = %q\n", mode)...), 0o600); err != nil {
				t.Fatal(err)
			}
			fsCall := f.fsSession(t, cfg, "redaction-e2e")
			// A result's text and its structuredContent (the same text
			// again, for tools with an outputSchema), and its _meta.
			call := func(name string, args map[string]any) (string, map[string]any) {
				t.Helper()
				text, res := fsCall(name, args)
				if res.StructuredContent != nil {
					b, _ := json.Marshal(res.StructuredContent)
					text += string(b)
				}
				return text, res.Meta
			}
			// The config dump passes through.
			text, meta := call("read_text_file", map[string]any{"path": filepath.Join(f.dataDir, "config.env")})
			if strings.Contains(text, "diverted") {
				t.Fatalf("config.env was diverted: %s", short(text))
			}
			if mode == "off" {
				if l := leaked(text); len(l) < len(testsecrets.Kinds) || text[:20] != dump.String()[:20] {
					t.Fatalf("mode off: %d of %d kinds passed, want all", len(l), len(testsecrets.Kinds))
				}
				if meta["scratchpad/redacted"] != nil {
					t.Errorf("mode off: _meta says %v", meta["scratchpad/redacted"])
				}
				return
			}
			if mode == "flag" {
				flagged(t, f, mem, call, text, meta, leaked)
				return
			}
			if l := leaked(text); len(l) > 0 {
				t.Fatalf("the passed-through text shows %d secrets: %v", len(l), l)
			}
			red, _ := meta["scratchpad/redacted"].(map[string]any)
			counts, _ := red["counts"].(map[string]any)
			for _, k := range testsecrets.Kinds {
				if counts[k] != float64(2) { // in content and structuredContent
					t.Errorf("_meta counts %s: %v, want 2 (the text is in content and structuredContent)", k, counts[k])
				}
			}
			if !strings.Contains(text, "[REDACTED:github-pat:") {
				t.Errorf("no github-pat mask in the text: %s", short(text))
			}

			// The log is diverted: the pointer counts what was masked.
			pointer, pmeta := call("read_text_file", map[string]any{"path": filepath.Join(f.dataDir, "app.log")})
			file := regexp.MustCompile(`file: (\S+)`).FindStringSubmatch(pointer)
			if file == nil {
				t.Fatalf("app.log not diverted: %s", short(pointer))
			}
			if !regexp.MustCompile(`secrets: \d+ masked before it was stored \(.*github-pat ×\d+`).MatchString(pointer) {
				t.Errorf("the pointer does not count the masked secrets:\n%s", pointer)
			}
			if d, _ := pmeta["scratchpad/diverted"].(map[string]any); d["secrets"] == nil {
				t.Errorf("the pointer's _meta has no secrets: %v", d)
			}
			if l := leaked(pointer); len(l) > 0 {
				t.Errorf("the pointer shows secrets: %v", l)
			}
			for _, q := range []struct {
				tool string
				args map[string]any
			}{
				{"head", map[string]any{"file": file[1], "lines": 120}},
				{"grep", map[string]any{"file": file[1], "pattern": "leaked|BEGIN|Bearer|xox|ghp_|sk_live|AKIA", "max_matches": 100}},
			} {
				out, _ := call(q.tool, q.args)
				if l := leaked(out); len(l) > 0 {
					t.Errorf("%s over the stored log shows %d secrets: %v", q.tool, len(l), l)
				}
				if !strings.Contains(out, "[REDACTED:") {
					t.Errorf("%s shows no mask: %s", q.tool, short(out))
				}
			}
			// What the model writes to its pad keeps no credential either:
			// a ledger note and a section.
			out, _ := call("append_scratchpad", map[string]any{"note": "found in the log: " + secrets[2].Text})
			if !strings.Contains(out, "masked before writing: github-pat ×1") {
				t.Errorf("append_scratchpad does not say it masked: %s", short(out))
			}
			if out, _ = call("update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "db: " + secrets[11].Text}}}); !strings.Contains(out, "masked before writing") {
				t.Errorf("update_scratchpad does not say it masked: %s", short(out))
			}
			if out, _ = call("read_scratchpad", nil); !strings.Contains(out, "[REDACTED:") || len(leaked(out)) > 0 {
				t.Errorf("read_scratchpad: masks %v, secrets %v:\n%s", strings.Contains(out, "[REDACTED:"), leaked(out), short(out))
			}
			// Nothing the proxy wrote holds one.
			_ = filepath.WalkDir(mem, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				if l := leaked(string(b)); len(l) > 0 {
					t.Errorf("%s holds %d secrets: %v", path, len(l), l)
				}
				return nil
			})
		})
	}
}

// flagged checks mode = "flag": the passed-through text keeps every
// secret and its _meta says where (findings); the diverted log's pointer
// names the kind and line of the secrets in the stored file, and those
// lines hold them; grep's answer over it names the file's lines too.
func flagged(t *testing.T, f *fixture, mem string, call func(string, map[string]any) (string, map[string]any), text string, meta map[string]any, leaked func(string) []string) {
	t.Helper()
	if l := leaked(text); len(l) < len(testsecrets.Kinds) {
		t.Fatalf("mode flag: %d of %d kinds passed, want all", len(l), len(testsecrets.Kinds))
	}
	red, _ := meta["scratchpad/redacted"].(map[string]any)
	if fs, _ := red["findings"].([]any); red["mode"] != "flag" || len(fs) == 0 {
		t.Errorf("mode flag: _meta says %v", red)
	}
	pointer, _ := call("read_text_file", map[string]any{"path": filepath.Join(f.dataDir, "app.log")})
	file := regexp.MustCompile(`file: (\S+)`).FindStringSubmatch(pointer)
	if file == nil {
		t.Fatalf("app.log not diverted: %s", short(pointer))
	}
	m := regexp.MustCompile(`secrets: \d+ kept as they are \(\[redaction\] mode = "flag"\): [^;]*; (\S+) on line (\d+)`).FindStringSubmatch(pointer)
	if m == nil {
		t.Fatalf("the pointer does not say where the kept secrets are:\n%s", pointer)
	}
	var stored string
	_ = filepath.WalkDir(mem, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == filepath.Base(file[1]) {
			b, _ := os.ReadFile(path)
			stored = string(b)
		}
		return err
	})
	lines := strings.Split(stored, "\n")
	n, _ := strconv.Atoi(m[2])
	if n < 1 || n > len(lines) || len(leaked(lines[n-1])) == 0 {
		t.Errorf("the pointer says %s on line %d of the stored file, which holds no secret (%d lines)", m[1], n, len(lines))
	}
	out, _ := call("grep", map[string]any{"file": file[1], "pattern": "leaked", "max_matches": 5})
	if len(leaked(out)) == 0 || !regexp.MustCompile(`credential\(s\) as they are \(\[redaction\] mode = "flag"\): \S+ on line \d+ of the file`).MatchString(out) {
		t.Errorf("grep over the stored log in flag mode does not say where:\n%s", short(out))
	}
}
