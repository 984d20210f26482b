package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestArgsPasswordOverTheBinary (issue 58): server-postgres takes its
// connection string, password and all, as an argument. init moves every
// credential in args to {{ env.VAR }} (the one rule of env values, headers
// and URLs), lists the variables and puts them in the mount snippet's env
// block without their values; doctor masks them, whether init wrote the
// config or a person wrote the password in clear.
func TestArgsPasswordOverTheBinary(t *testing.T) {
	const (
		pw    = "hunter2-Pg"
		flag  = "s3cr3t-flag-value"
		token = "tok-0123456789"
	)
	dir := t.TempDir()
	up := upstreamCmd()
	client := map[string]any{"mcpServers": map[string]any{
		"postgres": map[string]any{
			"command": up,
			"args": []string{"-test.run=^$", "postgresql://app:" + pw + "@db.example.com:5432/orders?sslmode=require",
				"--password", flag, "API_TOKEN=" + token, "--read-only"},
			"env": map[string]string{testupstream.EnvMode: "stdio"},
		},
	}}
	b, _ := json.Marshal(client)
	from, cfg := filepath.Join(dir, "client.json"), filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(from, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	initCmd := exec.Command(binary(t), "init", "--from", from, "--out", cfg)
	initCmd.Env = env
	var stderr strings.Builder
	initCmd.Stderr = &stderr
	out, err := initCmd.Output()
	if err != nil {
		t.Fatalf("init: %v\n%s%s", err, out, stderr.String())
	}
	if strings.Contains(stderr.String(), pw) {
		t.Errorf("init's warnings print the password:\n%s", stderr.String())
	}
	text, _ := os.ReadFile(cfg)
	for _, secret := range []string{pw, flag, token} {
		if strings.Contains(string(out), secret) || strings.Contains(string(text), secret) {
			t.Errorf("%q is copied or printed:\n%s\n%s", secret, text, out)
		}
	}
	vars := map[string]string{"POSTGRES_PASSWORD": pw, "POSTGRES_PASSWORD_2": flag, "POSTGRES_API_TOKEN": token}
	for _, want := range []string{
		`"postgresql://app:{{ env.POSTGRES_PASSWORD }}@db.example.com:5432/orders?sslmode=require"`,
		`"--password", "{{ env.POSTGRES_PASSWORD_2 }}"`,
		`"API_TOKEN={{ env.POSTGRES_API_TOKEN }}", "--read-only"`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("config lacks %s:\n%s", want, text)
		}
	}
	snippet := string(out[strings.Index(string(out), "{") : strings.LastIndex(string(out), "}")+1])
	var m struct {
		MCPServers map[string]struct {
			Env map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(snippet), &m); err != nil {
		t.Fatalf("snippet: %v\n%s", err, snippet)
	}
	got := keys(anyMap(m.MCPServers["scratchpad"].Env))
	if want := keys(anyMap(vars)); !reflect.DeepEqual(got, want) {
		t.Errorf("snippet's env block has %v, want %v:\n%s", got, want, snippet)
	}
	for v := range vars {
		if !strings.Contains(string(out), "  "+v+" (") || !strings.Contains(string(out), ` -e `+v+`="$`+v+`"`) {
			t.Errorf("init does not list %s, or its claude mcp add lacks -e:\n%s", v, out)
		}
	}

	// doctor, with the variables set, and on a config with the password
	// in clear: it runs the server and prints no secret.
	for v, val := range vars {
		env = append(env, v+"="+val)
	}
	clear := filepath.Join(dir, "clear.toml")
	plain := strings.NewReplacer("{{ env.POSTGRES_PASSWORD }}", pw, "{{ env.POSTGRES_PASSWORD_2 }}", flag, "{{ env.POSTGRES_API_TOKEN }}", token).Replace(string(text))
	if err := os.WriteFile(clear, []byte(plain), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{cfg, clear} {
		doctor := exec.Command(binary(t), "doctor", "--config", c)
		doctor.Env = env
		out, err := doctor.CombinedOutput()
		if err != nil {
			t.Fatalf("doctor %s: %v\n%s", filepath.Base(c), err, out)
		}
		for _, secret := range []string{pw, flag, token} {
			if strings.Contains(string(out), secret) {
				t.Errorf("doctor %s prints %q:\n%s", filepath.Base(c), secret, out)
			}
		}
		if want := "'postgresql://app:xxxxx@db.example.com:5432/orders?sslmode=xxxxx' --password xxxxx API_TOKEN=xxxxx --read-only): ready"; !strings.Contains(string(out), want) {
			t.Errorf("doctor %s lacks %q:\n%s", filepath.Base(c), want, out)
		}
	}
}

func anyMap(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}
