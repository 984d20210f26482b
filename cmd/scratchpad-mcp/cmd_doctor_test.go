package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// doctorUpstream is the TOML for a stdio server that is this test binary
// serving as testupstream (TestMain calls testupstream.MaybeRun). The
// -test.run guard keeps a binary without that TestMain from re-running the
// tests recursively.
func doctorUpstream(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("cmd = [%s, \"-test.run=^$\"]\nenv = { %s = \"stdio\" }\n", tomlString(exe), testupstream.EnvMode)
}

func doctorConfig(t *testing.T, body string) (path, memDir string) {
	t.Helper()
	dir := t.TempDir()
	memDir = filepath.Join(dir, "mem")
	path = filepath.Join(dir, "scratchpad.toml")
	text := fmt.Sprintf("memory_dir = %s\n%s", tomlString(memDir), body)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, memDir
}

func TestDoctorRealUpstream(t *testing.T) {
	cfg, mem := doctorConfig(t, `
[mcp.servers.up]
`+doctorUpstream(t)+`
mcp_filter = ["echo", "listing", "words", "crash"]

[mcp.servers.up.scratchpad]
"list*" = 100
"*" = { min_tokens = 5000 }
crash = 7

[mcp.servers.quiet]
`+doctorUpstream(t)+`
protocol = "2025-11-25"
prefix = "q"
mcp_filter = ["pid"]
`)
	code, out, stderr := runCLI(t, "doctor", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	wants := []string{
		`(?m)^config: .*scratchpad\.toml: ok, 2 upstream server\(s\)$`,
		`(?m)^memory_dir: ` + regexp.QuoteMeta(mem) + `: created$`,
		`(?m)^server up \(stdio .*\): ready$`,
		`(?m)^  protocol: 2026-07-28 \(server/discover\)$`,
		`(?m)^  protocol: 2025-11-25 \(initialize; protocol = "2025-11-25"\)$`,
		`(?m)^  echo +intercepted at >= 5000 tokens$`,
		`(?m)^  listing +intercepted at >= 100 tokens$`,
		`(?m)^  words +intercepted at >= 5000 tokens$`,
		`(?m)^  crash +intercepted at >= 7 tokens$`,
		`(?m)^server quiet \(stdio .*\): ready$`,
		`(?m)^  note: no \[mcp.servers.quiet.scratchpad\] patterns`,
		`(?m)^  q__pid +never intercepted$`,
		`(?m)^no problems found$`,
	}
	for _, w := range wants {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
	if strings.Contains(out, "  fancy") || strings.Contains(out, "  slow") {
		t.Errorf("tools hidden by mcp_filter are listed:\n%s", out)
	}
	if fi, err := os.Stat(mem); err != nil || !fi.IsDir() {
		t.Errorf("memory_dir not created: %v", err)
	}
}

func TestDoctorProblems(t *testing.T) {
	cfg, _ := doctorConfig(t, `
[mcp.servers.ok]
`+doctorUpstream(t)+`
mcp_filter = ["echo"]

[mcp.servers.missing]
cmd = ["/nonexistent/scratchpad-doctor-test-server"]

[mcp.servers.remote]
transport = "http_streamable"
url = "http://127.0.0.1:1/mcp"
timeout = "2s"
`)
	code, out, _ := runCLI(t, "doctor", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	wants := []string{
		`(?m)^server ok \(stdio .*\): ready$`,
		`(?m)^  echo +never intercepted$`,
		`(?m)^server missing \(stdio /nonexistent/scratchpad-doctor-test-server\): FAILED$`,
		`(?m)^server remote \(http_streamable http://127.0.0.1:1/mcp\): FAILED$`,
		`(?m)^2 problem\(s\):$`,
		`(?m)^problem: server missing: failed to start: .+`,
		`(?m)^problem: server remote: failed to start: .+`,
	}
	for _, w := range wants {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
}

func TestDoctorBadConfig(t *testing.T) {
	cfg, _ := doctorConfig(t, `
[agent.scratchpad]
enabeld = true

[mcp.servers.x]
transport = "carrier-pigeon"
cmd = ["x"]
`)
	code, out, _ := runCLI(t, "doctor", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	lines := regexp.MustCompile(`(?m)^problem: config: .*scratchpad\.toml:\d+:\d+: `).FindAllString(out, -1)
	if len(lines) != 2 {
		t.Errorf("want one problem line per config error (2), got %d:\n%s", len(lines), out)
	}
	if code, out, _ := runCLI(t, "doctor", "--config", filepath.Join(t.TempDir(), "none.toml")); code != 1 || !strings.Contains(out, "problem: config:") {
		t.Errorf("missing file: exit %d:\n%s", code, out)
	}
	if code, _, _ := runCLI(t, "doctor", "stray"); code != 2 {
		t.Errorf("stray argument: exit %d, want 2", code)
	}
}

func TestDoctorMemoryDir(t *testing.T) {
	// A uid that is neither ours nor root's (root is trusted).
	const other = 4242
	tests := []struct {
		name  string
		setup func(t *testing.T, mem string)
		root  bool // needs root to set up (chown)
		want  string
	}{
		{"ok", func(t *testing.T, mem string) { doctorMkdir(t, mem, 0o700) }, false, ""},
		{"our symlink", func(t *testing.T, mem string) {
			doctorMkdir(t, mem+".real", 0o700)
			doctorMust(t, os.Symlink(mem+".real", mem))
		}, false, ""},
		{"not a directory", func(t *testing.T, mem string) { doctorMust(t, os.WriteFile(mem, nil, 0o600)) }, false, "not a directory"},
		{"broken symlink", func(t *testing.T, mem string) { doctorMust(t, os.Symlink(mem+".gone", mem)) }, false, "broken symlink"},
		{"world writable", func(t *testing.T, mem string) {
			doctorMkdir(t, mem, 0o700)
			doctorMust(t, os.Chmod(mem, 0o777))
		}, false, "writable by every user"},
		{"symlink planted by another user", func(t *testing.T, mem string) {
			doctorMkdir(t, mem+".real", 0o700)
			doctorMust(t, os.Symlink(mem+".real", mem))
			doctorMust(t, os.Lchown(mem, other, other))
		}, true, "symlink owned by another user"},
		{"directory of another user", func(t *testing.T, mem string) {
			doctorMkdir(t, mem, 0o700)
			doctorMust(t, os.Chown(mem, other, other))
		}, true, "owned by another user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Getuid() != 0 {
				t.Skip("needs root to chown")
			}
			cfg, mem := doctorConfig(t, "")
			tt.setup(t, mem)
			code, out, _ := runCLI(t, "doctor", "--config", cfg)
			if tt.want == "" {
				if code != 0 || !strings.Contains(out, "ok (writable, yours)") {
					t.Fatalf("exit %d:\n%s", code, out)
				}
				return
			}
			if code != 1 || !regexp.MustCompile(`(?m)^problem: memory_dir .*`+regexp.QuoteMeta(tt.want)).MatchString(out) {
				t.Fatalf("exit %d, want a problem line with %q:\n%s", code, tt.want, out)
			}
		})
	}
}

func doctorMkdir(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	doctorMust(t, os.Mkdir(p, mode))
}

func doctorMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// doctor says which tools a client may not be shown, and why (issue 27):
// a server that lists tools by the capabilities a client declares (with
// --bare, which starts a second instance told none), an mcp_filter,
// search mode.
func TestDoctorSaysWhatClientsDoNotSee(t *testing.T) {
	cfg, _ := doctorConfig(t, `
[catalogue]
mode = "search"

[mcp.servers.up]
`+strings.Replace(doctorUpstream(t), "\"stdio\" }", "\"stdio\", "+testupstream.EnvByCapabilities+" = \"1\" }", 1)+`
mcp_filter = ["echo", "ask_*"]
`)
	code, out, stderr := runCLI(t, "doctor", "--bare", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, w := range []string{
		`(?m)^  ask_sampling +never intercepted$`,
		`(?m)^  hidden by mcp_filter: add_prompt, add_tool, block, .* and \d+ more$`,
		`(?m)^  listed only to clients that declare sampling, elicitation or roots: ask_elicitation, ask_roots, ask_sampling \(`,
		`(?m)^  \[catalogue\] mode = "search": these tools are found with search_tools`,
	} {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
}

// TestDoctorSaysWhyAServerSpeaks2025: a 2025 server that answers
// server/discover with -32601 is initialized, and doctor says so and why.
func TestDoctorSaysWhyAServerSpeaks2025(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := doctorConfig(t, fmt.Sprintf("\n[mcp.servers.old]\ncmd = [%s, \"-test.run=^$\"]\nenv = { %s = %q }\n",
		tomlString(exe), testupstream.EnvMode, testupstream.RawMode))
	code, out, stderr := runCLI(t, "doctor", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	want := `(?m)^server old \(stdio .*\): ready\n  protocol: 2025-06-18 \(initialize; discover: -32601 Method not found\)$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("output lacks %s:\n%s", want, out)
	}
}

// TestDoctorStartsEachUpstreamOnce (issue 58): doctor starts each server
// once (a second instance at the same time doubled a cold npx start);
// --bare starts the second one, after the first is ready.
func TestDoctorStartsEachUpstreamOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("counts starts with a POSIX shell")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 1}, {[]string{"--bare"}, 2}} {
		t.Run(fmt.Sprint(tc.want), func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			script := fmt.Sprintf("echo started >> %s; exec %s -test.run='^$'", shellQuote(starts), shellQuote(exe))
			cfg, _ := doctorConfig(t, fmt.Sprintf("\n[mcp.servers.up]\ncmd = [\"/bin/sh\", \"-c\", %s]\nenv = { %s = \"stdio\" }\n",
				tomlString(script), testupstream.EnvMode))
			code, out, stderr := runCLI(t, append([]string{"doctor", "--config", cfg}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			b, _ := os.ReadFile(starts)
			if n := strings.Count(string(b), "started"); n != tc.want {
				t.Errorf("doctor %v started the server %d times, want %d", tc.args, n, tc.want)
			}
		})
	}
}

// TestDoctorNamesAMissingVariable (issue 58): a server whose table needs
// an unset variable is reported NOT LOADED with the variable named (a
// problem: serve would leave it out); the other servers are checked.
func TestDoctorNamesAMissingVariable(t *testing.T) {
	const unset = "SCRATCHPAD_DOCTOR_TEST_UNSET_TOKEN"
	os.Unsetenv(unset)
	cfg, _ := doctorConfig(t, `
[mcp.servers.gh]
cmd = ["gh-mcp"]
env = { GITHUB_TOKEN = "{{ env.`+unset+` }}" }

[mcp.servers.ok]
`+doctorUpstream(t)+`
mcp_filter = ["echo"]
`)
	code, out, stderr := runCLI(t, "doctor", "--config", cfg)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	for _, w := range []string{
		`(?m)^config: .*: ok, 2 upstream server\(s\)$`,
		`(?m)^server gh: NOT LOADED$`,
		`(?m)^server ok \(stdio .*\): ready$`,
		`(?m)^  echo +never intercepted$`,
		`(?m)^1 problem\(s\):$`,
		`(?m)^problem: server gh: not loaded: environment variable ` + unset + ` is not set where scratchpad-mcp runs`,
	} {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", w, out)
		}
	}
}

// TestDoctorStartWait: a server a package runner starts gets the longer
// first-start allowance unless --timeout was given.
func TestDoctorStartWait(t *testing.T) {
	stdio := func(argv ...string) *config.Server {
		return &config.Server{Transport: config.TransportStdio, Cmd: argv}
	}
	tests := []struct {
		name   string
		sc     *config.Server
		set    bool
		runner string
		want   time.Duration
	}{
		{"npx", stdio("npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"), false, "npx", runnerWait},
		{"npx.cmd by path", stdio(`C:\Program Files\nodejs\npx.cmd`, "-y", "x"), false, "npx", runnerWait},
		{"uvx", stdio("uvx", "mcp-server-git"), false, "uvx", runnerWait},
		{"npm exec", stdio("npm", "exec", "x"), false, "npm exec", runnerWait},
		{"docker run", stdio("docker", "run", "-i", "img"), false, "docker run", runnerWait},
		{"docker ps is not", stdio("docker", "ps"), false, "", doctorWait},
		{"a binary", stdio("/usr/local/bin/kubectl-mcp"), false, "", doctorWait},
		{"http", &config.Server{Transport: config.TransportHTTPStreamable, URL: "http://127.0.0.1:1/mcp"}, false, "", doctorWait},
		{"npx with --timeout", stdio("npx", "x"), true, "npx", doctorWait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &doctor{wait: doctorWait, waitSet: tt.set}
			if got := packageRunner(tt.sc); got != tt.runner {
				t.Errorf("packageRunner = %q, want %q", got, tt.runner)
			}
			if got := d.startWait(tt.sc); got != tt.want {
				t.Errorf("startWait = %s, want %s", got, tt.want)
			}
		})
	}
}
