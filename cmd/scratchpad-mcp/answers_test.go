package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// token add of a name no owner may have says so in the owner's terms.
func TestTokenAddBadOwnerName(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[http]\ntokens_file = \"tokens.toml\"\n")
	code, _, errOut := runCLI(t, "token", "add", "bad name!", "--config", cfg)
	if code != 2 || !strings.Contains(errOut, `invalid owner name "bad name!"`) || strings.Contains(errOut, "agent identity") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// init leaves out a client's entry that runs scratchpad-mcp (init run
// twice, or a config that mounts it already), and says so.
func TestInitLeavesOutItself(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "client.json")
	if err := os.WriteFile(from, []byte(`{"mcpServers": {
		"scratchpad": {"command": "/usr/local/bin/scratchpad-mcp", "args": ["serve", "--config", "x.toml"]},
		"npx-scratchpad": {"command": "npx", "args": ["-y", "scratchpad-mcp@latest"]},
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
	}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "scratchpad.toml")
	code, stdout, stderr := runCLI(t, "init", "--from", from, "--out", out)
	b, _ := os.ReadFile(out)
	if code != 0 || strings.Contains(string(b), "[mcp.servers.scratchpad]") || strings.Contains(string(b), "npx-scratchpad") || !strings.Contains(string(b), "[mcp.servers.fs]") {
		t.Fatalf("exit %d\n%s%s\n%s", code, stdout, stderr, b)
	}
	if all := stdout + stderr; !strings.Contains(all, `"scratchpad" runs scratchpad-mcp itself: left out`) || !strings.Contains(all, `"npx-scratchpad" runs scratchpad-mcp itself`) {
		t.Errorf("init does not say what it left out:\n%s", all)
	}
}

// TestInitLeavesOutItselfUnderAnotherName (issue 38 item 9): an entry
// that runs this very executable under another name — a symlink by its
// path, the same link found on PATH, a path given as an argument — is
// left out too; another program is kept.
func TestInitLeavesOutItselfUnderAnotherName(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	link := filepath.Join(bin, "my-proxy")
	if err := os.Symlink(self, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name, entry string
		left        bool
	}{
		{"by path", `{"command": ` + strconv.Quote(link) + `, "args": ["serve"]}`, true},
		{"on PATH", `{"command": "my-proxy", "args": ["serve"]}`, true},
		{"as an argument", `{"command": "env", "args": ["A=1", ` + strconv.Quote(link) + `, "serve"]}`, true},
		{"another program", `{"command": ` + strconv.Quote(sh) + `, "args": ["-c", "exit 0"]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			from, out := filepath.Join(dir, "client.json"), filepath.Join(dir, "scratchpad.toml")
			if err := os.WriteFile(from, []byte(`{"mcpServers": {"entry": `+tc.entry+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "init", "--from", from, "--out", out)
			b, _ := os.ReadFile(out)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			said := strings.Contains(stderr, `"entry" runs scratchpad-mcp itself: left out`)
			mounted := strings.Contains(string(b), "[mcp.servers.entry]")
			if said != tc.left || mounted == tc.left {
				t.Errorf("left out: said %v, mounted %v; want left out %v\n%s\n%s", said, mounted, tc.left, stderr, b)
			}
		})
	}
}

// A config that mounts scratchpad-mcp behind itself does not start itself
// without end: the inner one refuses at once, saying why, and doctor
// reports that upstream's failure.
func TestItselfAsUpstreamRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.toml")
	body := fmt.Sprintf("memory_dir = %q\n\n[mcp.servers.loop]\ncmd = [%q, \"serve\", \"--config\", %q]\ntimeout = \"10s\"\nrestart_max_attempts = -1\n", filepath.Join(dir, "mem"), binary(t), cfg)
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary(t), "doctor", "--config", cfg, "--timeout", "20s")
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "started as an upstream of scratchpad-mcp") {
		t.Fatalf("doctor on a config with itself as upstream:\n%s", out)
	}
	// Run directly as an upstream would be, it refuses at once.
	inner := exec.Command(binary(t), "serve", "--config", cfg)
	inner.Env = append(os.Environ(), "SCRATCHPAD_MCP_DEPTH=1")
	b, err := inner.CombinedOutput()
	if err == nil || !strings.Contains(string(b), "a [mcp.servers] entry of the config runs scratchpad-mcp itself") {
		t.Fatalf("serve as its own upstream: %v\n%s", err, b)
	}
}

// init does not copy secrets into the config: a token in env or an
// Authorization header becomes {{ env.NAME }}, and the names are listed.
func TestInitKeepsSecretsOut(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "client.json")
	if err := os.WriteFile(from, []byte(`{"mcpServers": {
		"github": {"command": "github-mcp", "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnop1234", "LOG_LEVEL": "debug"}},
		"linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer lin_api_0123456789abcdef"}}
	}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "scratchpad.toml")
	code, stdout, stderr := runCLI(t, "init", "--from", from, "--out", out)
	b, _ := os.ReadFile(out)
	text := string(b)
	if code != 0 || strings.Contains(text, "ghp_abcdefghijklmnop1234") || strings.Contains(text, "lin_api_0123456789abcdef") {
		t.Fatalf("exit %d; a secret was copied:\n%s\n%s", code, text, stderr)
	}
	for _, want := range []string{"{{ env.GITHUB_PERSONAL_ACCESS_TOKEN }}", "Bearer {{ env.LINEAR_TOKEN }}", `"debug"`} {
		if !strings.Contains(text, want) {
			t.Errorf("config lacks %s:\n%s", want, text)
		}
	}
	if !strings.Contains(stdout, "2 secret value(s) were not copied") || !strings.Contains(stdout, "LINEAR_TOKEN (header Authorization of server \"linear\")") {
		t.Errorf("init does not say which values were secrets:\n%s", stdout)
	}
}

// doctor says how each server's start goes while it waits: the healthy
// one's readiness, and whom it is still waiting for.
func TestDoctorShowsProgress(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[mcp.servers.stuck]\ncmd = [\"sleep\", \"1000\"]\n")
	_, out, errOut := runCLI(t, "doctor", "--config", cfg, "--timeout", "4s")
	if !strings.Contains(errOut, "k8s: ready after") || !strings.Contains(errOut, "waiting for stuck (") {
		t.Errorf("doctor's progress:\n%s\n(stdout:\n%s)", errOut, out)
	}
	if !strings.Contains(out, "server stuck (stdio sleep 1000): NOT READY") {
		t.Errorf("doctor's report:\n%s", out)
	}
}
