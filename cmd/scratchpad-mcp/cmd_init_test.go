package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

func TestInitStarterLoads(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "scratchpad.toml")
	code, stdout, stderr := runCLI(t, "init", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	cfg, err := config.Load(out)
	if err != nil {
		t.Fatalf("starter config does not load: %v", err)
	}
	if len(cfg.Servers) != 0 {
		t.Errorf("starter has %d servers, want 0", len(cfg.Servers))
	}
	if !cfg.Agent.Scratchpad.Enabled {
		t.Error("starter config disables the scratchpad")
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 (the file may hold secrets)", fi.Mode().Perm())
	}
	if !strings.Contains(stdout, `"mcpServers"`) || !strings.Contains(stdout, "--config") {
		t.Errorf("stdout lacks the client snippet:\n%s", stdout)
	}
}

func TestInitRefusesOverwrite(t *testing.T) {
	out := filepath.Join(t.TempDir(), "scratchpad.toml")
	if err := os.WriteFile(out, []byte("# hand-tuned\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "init", "--out", out)
	if code == 0 || !strings.Contains(stderr, "--force") {
		t.Fatalf("exit %d, stderr %q: want a refusal that mentions --force", code, stderr)
	}
	if b, _ := os.ReadFile(out); string(b) != "# hand-tuned\n" {
		t.Fatalf("existing file changed: %q", b)
	}
	if code, _, stderr := runCLI(t, "init", "--out", out, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "[agent.scratchpad]") {
		t.Fatal("--force did not rewrite the file")
	}
}

func TestInitBadUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"both sources", []string{"--from", "a.json", "--from-claude-desktop", "b.json", "--out", filepath.Join(dir, "x.toml")}, 2},
		{"stray argument", []string{"extra"}, 2},
		{"unknown flag", []string{"--nope"}, 2},
		{"missing source", []string{"--from", filepath.Join(dir, "missing.json"), "--out", filepath.Join(dir, "y.toml")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, _ := runCLI(t, append([]string{"init"}, tt.args...)...)
			if code != tt.want {
				t.Errorf("exit %d, want %d", code, tt.want)
			}
		})
	}
}

// TestInitConvert converts each client shape and checks the written file
// with the real loader.
func TestInitConvert(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "ghp_x", "API_KEY": "k"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name    string
		json    string
		key     string // snippet key
		want    []config.Server
		warning string // substring of a warning, if one is expected
	}{
		{
			name: "claude desktop",
			json: `{"mcpServers": {
				"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
				"github": {"command": "docker", "args": ["run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"], "env": {"GITHUB_TOKEN": "literal \"quoted\" \\ value"}}
			}, "globalShortcut": ""}`,
			key: "mcpServers",
			want: []config.Server{
				{Name: "filesystem", Transport: "stdio", Cmd: []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"}},
				{Name: "github", Transport: "stdio", Cmd: []string{"docker", "run", "-i", "--rm", "-e", "GITHUB_TOKEN", "ghcr.io/github/github-mcp-server"},
					// A secret is not copied: read from the environment.
					Env: map[string]string{"GITHUB_TOKEN": "ghp_x"}},
			},
		},
		{
			name: "odd names are quoted or renamed",
			json: `{"mcpServers": {
				"my.server": {"command": "srv"},
				"My Server!": {"command": "srv2"},
				"My-Server": {"command": "srv3"}
			}}`,
			key: "mcpServers",
			want: []config.Server{
				{Name: "my.server", Transport: "stdio", Cmd: []string{"srv"}},
				{Name: "My-Server", Transport: "stdio", Cmd: []string{"srv2"}},
				{Name: "My-Server-2", Transport: "stdio", Cmd: []string{"srv3"}},
			},
			warning: `"My Server!" is named "My-Server"`,
		},
		{
			name: "cursor and claude code remote servers",
			json: `{"mcpServers": {
				"remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
				"legacy": {"url": "https://old.example.com/sse"},
				"typed": {"type": "sse", "url": "https://x.example.com/events"},
				"code": {"type": "http", "url": "https://y.example.com/mcp?k=${TOKEN:-none}"}
			}}`,
			key: "mcpServers",
			want: []config.Server{
				{Name: "remote", Transport: "http_streamable", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer k"}},
				{Name: "legacy", Transport: "sse", URL: "https://old.example.com/sse"},
				{Name: "typed", Transport: "sse", URL: "https://x.example.com/events"},
				{Name: "code", Transport: "http_streamable", URL: "https://y.example.com/mcp?k=none"},
			},
			warning: "{{ env.API_KEY }}, which is not set here",
		},
		{
			name: "vs code mcp.json",
			json: `{"inputs": [], "servers": {
				"gh": {"type": "stdio", "command": "gh-mcp", "env": {"TOKEN": "${env:GITHUB_TOKEN}", "DIR": "${workspaceFolder}"}},
				"off": {"command": "never", "disabled": true}
			}}`,
			key: "servers",
			want: []config.Server{
				{Name: "gh", Transport: "stdio", Cmd: []string{"gh-mcp"}, Env: map[string]string{"TOKEN": "ghp_x", "DIR": "${workspaceFolder}"}},
			},
			warning: "${workspaceFolder}",
		},
		{
			name: "vs code settings.json",
			json: `{"editor.fontSize": 12, "mcp": {"servers": {"s": {"type": "http", "url": "http://127.0.0.1:9000/mcp"}}}}`,
			key:  "servers",
			want: []config.Server{{Name: "s", Transport: "http_streamable", URL: "http://127.0.0.1:9000/mcp"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "client.json")
			out := filepath.Join(dir, "scratchpad.toml")
			if err := os.WriteFile(in, []byte(tt.json), 0o600); err != nil {
				t.Fatal(err)
			}
			for k := range env {
				t.Setenv(k, "") // restored after the test
				os.Unsetenv(k)
			}
			code, stdout, stderr := runCLI(t, "init", "--from", in, "--out", out)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if tt.warning != "" && !strings.Contains(stderr, tt.warning) {
				t.Errorf("stderr lacks warning %q:\n%s", tt.warning, stderr)
			}
			cfg, err := config.LoadWith(out, &config.Options{LookupEnv: lookup})
			if err != nil {
				b, _ := os.ReadFile(out)
				t.Fatalf("generated config does not load: %v\n%s", err, b)
			}
			if len(cfg.Servers) != len(tt.want) {
				t.Fatalf("got %d servers, want %d", len(cfg.Servers), len(tt.want))
			}
			for i, w := range tt.want {
				g := cfg.Servers[i]
				if g.Name != w.Name || g.Transport != w.Transport || g.URL != w.URL ||
					!reflect.DeepEqual(g.Cmd, w.Cmd) || !initEqualMaps(g.Env, w.Env) || !initEqualMaps(g.Headers, w.Headers) {
					t.Errorf("server %d:\n got %s %s cmd=%q env=%v url=%q headers=%v\nwant %s %s cmd=%q env=%v url=%q headers=%v",
						i, g.Name, g.Transport, g.Cmd, g.Env, g.URL, g.Headers, w.Name, w.Transport, w.Cmd, w.Env, w.URL, w.Headers)
				}
				if th, ok := g.Threshold("any_tool"); !ok || th != 5120 {
					t.Errorf("server %s: threshold of any tool = %d, %v; want 5120", g.Name, th, ok)
				}
			}
			if !regexp.MustCompile(`claude mcp add scratchpad( -e [A-Z_]+="\$[A-Z_]+")* -- `).MatchString(stdout) {
				t.Errorf("stdout lacks the Claude Code command:\n%s", stdout)
			}
			snippet := stdout[strings.Index(stdout, "{") : strings.LastIndex(stdout, "}")+1]
			var m map[string]map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			if err := json.Unmarshal([]byte(snippet), &m); err != nil {
				t.Fatalf("snippet is not JSON: %v\n%s", err, snippet)
			}
			e, ok := m[tt.key]["scratchpad"]
			abs, _ := filepath.Abs(out)
			if !ok || !reflect.DeepEqual(e.Args, []string{"serve", "--config", abs}) || !filepath.IsAbs(e.Command) {
				t.Errorf("snippet %s: want %s.scratchpad spawning an absolute command with serve --config %s", snippet, tt.key, abs)
			}
		})
	}
}

func TestInitConvertErrors(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"not json", `{`, "not a JSON object"},
		{"no servers", `{"globalShortcut": ""}`, "no \"mcpServers\""},
		{"servers not an object", `{"mcpServers": []}`, "not a JSON object"},
		{"empty entry", `{"mcpServers": {"x": {}}}`, "neither command nor url"},
		{"bad url type", `{"mcpServers": {"x": {"type": "ws", "url": "ws://h"}}}`, `unknown type "ws"`},
		{"bad command type", `{"mcpServers": {"x": {"type": "sse", "command": "c"}}}`, `unknown type "sse"`},
		{"wrong field type", `{"mcpServers": {"x": {"command": 3}}}`, "mcpServers.x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := convertClientConfig([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// TestInitConvertedFileRejectedByLoader: a value the loader refuses (here
// a url the client accepted but the config does not) fails init instead of
// leaving a config that breaks at spawn time.
func TestInitConvertedFileRejectedByLoader(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "c.json")
	if err := os.WriteFile(in, []byte(`{"mcpServers": {"x": {"url": "ftp://h/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "init", "--from", in, "--out", filepath.Join(dir, "s.toml"))
	if code != 1 || !strings.Contains(stderr, "does not load") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestTOMLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\tnl\n", `"tab\tnl\n"`},
		{"\x01\x7f", `"\u0001\u007F"`},
		{"ünï", `"ünï"`},
	}
	for _, tt := range tests {
		if got := tomlString(tt.in); got != tt.want {
			t.Errorf("tomlString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	keys := []struct{ in, want string }{{"k8s", "k8s"}, {"my.server", `"my.server"`}, {"a-b_c", "a-b_c"}, {"", `""`}}
	for _, tt := range keys {
		if got := tomlKey(tt.in); got != tt.want {
			t.Errorf("tomlKey(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func initEqualMaps(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/usr/bin/scratchpad-mcp", "/usr/bin/scratchpad-mcp"},
		{"/x/@scope/pkg,v=1+2", "/x/@scope/pkg,v=1+2"},
		{"/Users/me/My Tools/bin", "'/Users/me/My Tools/bin'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
	}
	for _, tt := range tests {
		if got := shellQuote(tt.in); got != tt.want {
			t.Errorf("shellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// TestInitMarksOAuthCandidates: a remote server without an Authorization
// header (the client logged in to it itself) is converted with a
// commented [auth] table naming `auth login`; uncommented, it loads.
func TestInitMarksOAuthCandidates(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "client.json"), filepath.Join(dir, "scratchpad.toml")
	json := `{"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp"},
		"keyed": {"url": "https://k.example.com/mcp", "headers": {"Authorization": "Bearer x"}}}}`
	if err := os.WriteFile(in, []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "init", "--from", in, "--out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	s := string(b)
	if !strings.Contains(s, "# [mcp.servers.linear.auth]\n# type = \"oauth\"") || !strings.Contains(s, "auth login --config FILE linear") {
		t.Fatalf("linear is not marked for OAuth:\n%s", s)
	}
	if strings.Contains(s, "[mcp.servers.keyed.auth]") {
		t.Errorf("a server with an Authorization header is marked for OAuth:\n%s", s)
	}
	s = strings.Replace(s, "# [mcp.servers.linear.auth]\n# type = \"oauth\"", "[mcp.servers.linear.auth]\ntype = \"oauth\"", 1)
	if err := os.WriteFile(out, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadWith(out, &config.Options{LookupEnv: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatalf("uncommented, it does not load: %v\n%s", err, s)
	}
	if a := cfg.Server("linear").Auth; a == nil || a.Type != config.AuthOAuth {
		t.Errorf("linear's auth = %+v", a)
	}
}

// TestInitKeepsEveryCredentialOut (issue 38 item 8): one rule for every
// value that looks like a credential — env values (short ones too),
// headers, URL query parameters, the URL's password and a token as its
// user name — each becomes {{ env.VAR }}, listed on stdout; settings stay
// as written. Set to the old values, the file loads back to the client's
// servers.
func TestInitKeepsEveryCredentialOut(t *testing.T) {
	const ghp = "ghp_0123456789abcdefABCDEF0123456789abcd"
	client := `{"mcpServers": {
		"db": {"command": "db-mcp", "env": {"DB_PASSWORD": "hunter2", "NODE_ENV": "production", "AUTH_ENABLED": "true", "NOTE": "` + ghp + `"}},
		"search": {"url": "https://search.example.com/mcp?api_key=abc123&region=eu-west-1"},
		"basic": {"url": "https://bob:pw1@basic.example.com/mcp", "headers": {"X-Api-Key": "k-42", "Accept-Language": "en"}},
		"git": {"url": "https://` + ghp + `@git.example.com/mcp"}
	}}`
	dir := t.TempDir()
	in, out := filepath.Join(dir, "client.json"), filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(in, []byte(client), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "init", "--from", in, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	text, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "abc123", "pw1", "k-42", ghp} {
		if strings.Contains(string(text), secret) {
			t.Errorf("the written config holds %q in clear:\n%s", secret, text)
		}
	}
	vars := map[string]string{
		"DB_PASSWORD": "hunter2", "NOTE": ghp, "SEARCH_API_KEY": "abc123",
		"BASIC_PASSWORD": "pw1", "BASIC_API_KEY": "k-42", "GIT_URL_USER": ghp,
	}
	for _, kept := range []string{`NODE_ENV = "production"`, `AUTH_ENABLED = "true"`, "region=eu-west-1", `Accept-Language = "en"`} {
		if !strings.Contains(string(text), kept) {
			t.Errorf("the written config lacks %s:\n%s", kept, text)
		}
	}
	for v := range vars {
		if !strings.Contains(stdout, "  "+v+" (") {
			t.Errorf("stdout does not list %s:\n%s", v, stdout)
		}
	}
	cfg, err := config.LoadWith(out, &config.Options{LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }})
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	want := map[string]string{
		"search": "https://search.example.com/mcp?api_key=abc123&region=eu-west-1",
		"basic":  "https://bob:pw1@basic.example.com/mcp",
		"git":    "https://" + ghp + "@git.example.com/mcp",
	}
	for name, u := range want {
		if s := cfg.Server(name); s == nil || s.URL != u {
			t.Errorf("server %s: %+v, want url %s", name, s, u)
		}
	}
	if db := cfg.Server("db"); db == nil || db.Env["DB_PASSWORD"] != "hunter2" || db.Env["NOTE"] != ghp {
		t.Errorf("db: %+v", db)
	}
	if b := cfg.Server("basic"); b == nil || b.Headers["X-Api-Key"] != "k-42" {
		t.Errorf("basic: %+v", b)
	}
}

// TestInitLaunchCommand: init run from npm's platform package (npx) gives
// a snippet that runs npx, not the binary in npx's cache.
func TestInitLaunchCommand(t *testing.T) {
	tests := []struct {
		exe  string
		want []string
	}{
		{"/usr/local/bin/scratchpad-mcp", []string{"/usr/local/bin/scratchpad-mcp"}},
		{"/home/me/.npm/_npx/1f2e/node_modules/@scratchpad-mcp/linux-x64/bin/scratchpad-mcp", []string{"npx", "-y", "scratchpad-mcp"}},
		{`C:\Users\me\AppData\Local\npm-cache\_npx\1f2e\node_modules\@scratchpad-mcp\win32-x64\bin\scratchpad-mcp.exe`, []string{"npx", "-y", "scratchpad-mcp"}},
	}
	for _, tt := range tests {
		if got := launchCommand(tt.exe); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("launchCommand(%q) = %q, want %q", tt.exe, got, tt.want)
		}
	}
	var m map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(clientSnippet("mcpServers", []string{"npx", "-y", "scratchpad-mcp"}, "/c/s.toml", nil)), &m); err != nil {
		t.Fatal(err)
	}
	if e := m["mcpServers"]["scratchpad"]; e["command"] != "npx" || !reflect.DeepEqual(e["args"], []any{"-y", "scratchpad-mcp", "serve", "--config", "/c/s.toml"}) {
		t.Errorf("snippet entry %v", e)
	}
}
