package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// testEnv is the only environment the fixtures see, so tests never depend
// on the machine's variables.
func testEnv(vars map[string]string) *Options {
	return &Options{
		LookupEnv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		HomeDir:   "/home/u",
	}
}

// TestInvalidFixtures loads every file in testdata/config/invalid and
// compares the errors, line:col included, with the file's "# want:" lines.
func TestInvalidFixtures(t *testing.T) {
	files, err := filepath.Glob("../testdata/config/invalid/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					want = append(want, f+":"+w)
				}
			}
			if len(want) == 0 {
				t.Fatal("fixture has no # want: lines")
			}
			_, err = LoadWith(f, testEnv(nil))
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(err, ErrInvalid) = false for %v", err)
			}
			var first *Error
			if !errors.As(err, &first) {
				t.Fatalf("errors.As(*Error) failed for %T", err)
			}
			if first.File != f {
				t.Errorf("File = %q, want %q", first.File, f)
			}
			got := strings.Split(err.Error(), "\n")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
			}
			// One problem is a bare *Error, several are Errors.
			_, isErrors := err.(Errors)
			if isErrors != (len(want) > 1) {
				t.Errorf("got %T for %d errors", err, len(want))
			}
		})
	}
}

func TestLoadExample(t *testing.T) {
	c, err := LoadWith("../testdata/scratchpad.example.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 3 || c.Servers[0].Name != "k8s" || c.Servers[1].Name != "logs" || c.Servers[2].Name != "legacy" {
		t.Fatalf("servers not in file order: %+v", c.Servers)
	}
	k := c.Servers[0]
	if minTokens(k, "list_pods") != 1000 || minTokens(k, "list_nodes") != 2000 || minTokens(k, "logs") != DefaultMinTokens {
		t.Errorf("thresholds: %+v", k.Thresholds)
	}
	if got, want := k.Args, []string{"--context", "prod"}; !reflect.DeepEqual(got, want) {
		t.Errorf("args = %q, want %q (env default)", got, want)
	}
	if c.MemoryDir != "/home/u/.local/share/scratchpad-mcp" {
		t.Errorf("MemoryDir = %q", c.MemoryDir)
	}
	if c.Servers[1].Headers["Authorization"] != "Bearer dev-token" || c.Servers[1].Timeout != 120*time.Second {
		t.Errorf("logs server: %+v", c.Servers[1])
	}
	if len(c.HTTP.Tokens) != 2 || c.HTTP.Tokens[0].Owner != "coordinator" {
		t.Errorf("tokens: %+v", c.HTTP.Tokens)
	}
	if len(c.Pad.Sections) != 3 || !c.Pad.Sections[1].Numbered {
		t.Errorf("sections: %+v", c.Pad.Sections)
	}
	if c.Explore.MaxCallsPerOwner != 4 || c.Explore.CallTimeout != time.Minute || c.Explore.MaxReferenceBytes != 64<<20 || c.Servers[0].SecretsByReference {
		t.Errorf("explore: %+v", c.Explore)
	}
	if got := c.AgentFor("researcher"); got.Model != "gpt-4.1-mini" || got.Scratchpad.MaxExtractionTokens != 4000 || !got.Scratchpad.Enabled {
		t.Errorf("researcher: %+v", got)
	}
}

// minTokens is a test shorthand: the threshold, 0 when none.
func minTokens(s Server, tool string) int {
	n, _ := s.Threshold(tool)
	return n
}

func TestLoadMinimalDefaults(t *testing.T) {
	c, err := LoadWith("../testdata/config/valid/minimal.toml", testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	d := defaultConfig(testEnv(nil).LookupEnv, func() (string, error) { return "/home/u", nil })
	if !reflect.DeepEqual(c.Agent, d.Agent) || !reflect.DeepEqual(c.Pad, d.Pad) || c.HTTP.Addr != DefaultHTTPAddr ||
		c.Explore.CacheBytes != 256<<20 || c.MemoryDir != d.MemoryDir {
		t.Errorf("defaults not applied:\n got %+v\nwant %+v", c, d)
	}
	if len(c.Servers) != 1 {
		t.Fatalf("servers: %+v", c.Servers)
	}
	s := c.Servers[0]
	want := Server{
		Name: "fs", Transport: TransportStdio,
		Cmd:                []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp/my dir"},
		Timeout:            DefaultTimeout,
		RestartMaxAttempts: DefaultRestartMaxAttempts,
		RestartBackoffMax:  DefaultRestartBackoffMax,
		Protocol:           ProtocolAuto,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("server:\n got %+v\nwant %+v", s, want)
	}
	if !s.Allowed("anything") {
		t.Error("no mcp_filter must allow every tool")
	}
	if _, ok := s.Threshold("read_file"); ok {
		t.Error("no scratchpad table must intercept nothing")
	}
	abs, _ := filepath.Abs("../testdata/config/valid/minimal.toml")
	if c.Path != abs {
		t.Errorf("Path = %q, want %q", c.Path, abs)
	}
}

func TestLoadInline(t *testing.T) {
	f := "../testdata/config/valid/inline.toml"
	c, err := LoadWith(f, testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs(filepath.Dir(f))
	if c.MemoryDir != filepath.Join(dir, "data") {
		t.Errorf("relative memory_dir = %q, want it under %q", c.MemoryDir, dir)
	}
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	if want := []string{"zeta", "alpha", "beta"}; !reflect.DeepEqual(names, want) {
		t.Errorf("order = %q, want %q", names, want)
	}
	if c.Servers[0].Cwd != filepath.Join(dir, "work") {
		t.Errorf("cwd = %q", c.Servers[0].Cwd)
	}
	beta := c.Server("beta")
	if beta == nil || !beta.FilterSet || len(beta.Filter) != 0 || beta.Allowed("x") {
		t.Errorf("mcp_filter = [] must expose nothing: %+v", beta)
	}
	if c.Server("nope") != nil {
		t.Error("Server(unknown) != nil")
	}
}

func TestLoadEnv(t *testing.T) {
	env := map[string]string{"SP_HOME": "/srv", "SP_HOST": "mcp.example.com", "SP_TOKEN": "t0k", "SP_EMPTY": ""}
	c, err := LoadWith("../testdata/config/valid/env.toml", testEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ name, got, want string }{
		{"memory_dir", c.MemoryDir, "/srv/mem"},
		{"model default (no spaces)", c.Agent.Model, "claude-sonnet-4-5"},
		{"provider default (double quotes)", c.Agent.Provider, "anthropic"},
		{"url", c.Servers[0].URL, "https://mcp.example.com:443/mcp"},
		{"header", c.Servers[0].Headers["Authorization"], "Bearer t0k"},
		{"non-env template untouched", c.Servers[1].Cmd[2], "go-template={{.metadata.name}}"},
		{"empty var takes default", c.Servers[1].Env["KUBECONFIG"], "/etc/kube"},
		{"empty var without default", c.Servers[1].Env["EMPTY"], ""},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}
	// The same file without SP_TOKEN: the error names the variable and key.
	delete(env, "SP_TOKEN")
	_, err = LoadWith("../testdata/config/valid/env.toml", testEnv(env))
	var e *Error
	if !errors.As(err, &e) || e.Key != "mcp.servers.remote.headers.Authorization" || !strings.Contains(e.Msg, "SP_TOKEN") || e.Line != 10 {
		t.Errorf("missing env error = %#v", err)
	}
}

func TestLoadNotFound(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.toml"))
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrInvalid) {
		t.Errorf("err = %v: want fs.ErrNotExist, not ErrInvalid", err)
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name, src string
		wantErr   string // substring; "" means valid
	}{
		{"empty file", "", ""},
		{"crlf", "[agent]\r\nmodel = \"m\"\r\n  modle = \"x\"\r\n", "t.toml:3:3: agent.modle: unknown key"},
		{"tabs", "[agent]\n\tmodle = 1", "t.toml:2:2: agent.modle"},
		{"comments only", "# nothing\n\n", ""},
		{"bom", "\xef\xbb\xbfmemory_dir = \"/x\"\n", ""},
		{"tilde alone", "memory_dir = \"~\"", ""},
		{"restart never", "[mcp.servers.a]\ncmd='x'\nrestart_max_attempts = -1", ""},
		{"timeout int", "[mcp.servers.a]\ncmd='x'\ntimeout = 30", ""},
		{"search mode", "[catalogue]\nmode = \"search\"\n[mcp.servers.a]\ncmd='x'\nlisting = \"always\"\nshared = true", ""},
		{"catalogue mode typo", "[catalogue]\nmode = \"serch\"", "2:1: catalogue.mode"},
		{"catalogue key typo", "[catalogue]\nmdoe = \"search\"", "catalogue.mdoe: unknown key"},
		{"listing value", "[mcp.servers.a]\ncmd='x'\nlisting = \"never\"", "3:1: mcp.servers.a.listing"},
		{"protocol auto", "[mcp.servers.a]\ncmd='x'\nprotocol = \"auto\"", ""},
		{"protocol modern", "[mcp.servers.a]\ncmd='x'\nprotocol = \"2026-07-28\"", ""},
		{"protocol legacy sse", "[mcp.servers.a]\ntransport = \"sse\"\nurl = \"http://h/sse\"\nprotocol = \"2025-11-25\"", ""},
		{"protocol value", "[mcp.servers.a]\ncmd='x'\nprotocol = \"2025-06-18\"", `t.toml:3:1: mcp.servers.a.protocol: invalid value "2025-06-18"`},
		{"protocol type", "[mcp.servers.a]\ncmd='x'\nprotocol = 2026", "3:1: mcp.servers.a.protocol: want a string"},
		{"protocol modern sse", "[mcp.servers.a]\ntransport = \"sse\"\nurl = \"http://h/sse\"\nprotocol = \"2026-07-28\"", "4:1: mcp.servers.a.protocol: \"2026-07-28\" needs transport"},
		{"shared not a bool", "[mcp.servers.a]\ncmd='x'\nshared = \"yes\"", "mcp.servers.a.shared: want true or false"},
		{"upstream idle", "[http]\nupstream_idle = \"5m\"", ""},
		{"max connections", "[http]\nmax_connections = 0", "http.max_connections: 0 out of range"},
		{"owner max bytes", "[retention]\nowner_max_bytes = \"2GB\"", ""},
		{"owner max bytes bad", "[retention]\nowner_max_bytes = \"lots\"", "retention.owner_max_bytes"},
		{"upstream idle zero", "[http]\nupstream_idle = 0", "http.upstream_idle"},
		{"date value", "memory_dir = 1979-05-27", "1:1: memory_dir: want a string, got date-time"},
		{"servers not a table", "mcp = { servers = 3 }", "mcp.servers: want a table, got integer"},
		{"server not a table", "[mcp.servers]\na = 3", "2:1: mcp.servers.a: want a table, got integer"},
		{"sections not tables", "[pad]\nsections = [1]", "pad.sections[0]: want a table, got integer"},
		{"tokens not array", "[http]\ntokens = 3", "http.tokens: want an array, got integer"},
		{"margin NaN", "[agent.scratchpad]\ncontext_safety_margin = nan", "out of range"},
		{"margin int zero", "[agent.scratchpad]\ncontext_safety_margin = 0", ""},
		{"worker not a table", "[orchestration]\nworker = 1", "orchestration.worker: want a table"},
		{"duplicate key (toml)", "a = 1\na = 2", "invalid TOML"},
		{"huge duration", "[mcp.servers.a]\ncmd='x'\ntimeout = \"9999h\"", "out of range"},
		{"json pad with schema", "[pad]\nformat = \"json\"\nschema = \"s.json\"", ""},
		{"quoted dotted key", "[mcp.servers.a]\ncmd='x'\n[mcp.servers.a.scratchpad]\n\"a.b\" = 1\n'c.d' = { min_tokens = 2 }", ""},
		{"bool type", "[pad]\nenabled = \"yes\"", "2:1: pad.enabled: want true or false, got string"},
		{"fraction type", "[agent.scratchpad]\ncontext_safety_margin = \"0.2\"", "want a number, got string"},
		{"mcp not a table", "mcp = 1", "1:1: mcp: want a table, got integer"},
		{"explore not a table", "explore = []", "explore: want a table, got array"},
		{"no suggestion", "[explore]\nzzzzzz = 1", `unknown key "zzzzzz" (known keys: cache_mb, max_calls_per_owner, call_timeout, max_reference_bytes)`},
		{"reference bound", "[explore]\nmax_reference_bytes = \"8MiB\"", ""},
		{"reference bound small", "[explore]\nmax_reference_bytes = 100", "t.toml:2:1: explore.max_reference_bytes: 100 B out of range [1.0 KiB, 1.0 GiB]"},
		{"reference bound large", "[explore]\nmax_reference_bytes = \"2GiB\"", "t.toml:2:1: explore.max_reference_bytes: 2.0 GiB out of range"},
		{"reference bound bad", "[explore]\nmax_reference_bytes = \"lots\"", "explore.max_reference_bytes: invalid size \"lots\""},
		{"secrets by reference", "[mcp.servers.a]\ncmd='x'\nsecrets_by_reference = true", ""},
		{"secrets by reference type", "[mcp.servers.a]\ncmd='x'\nsecrets_by_reference = \"yes\"", "t.toml:3:1: mcp.servers.a.secrets_by_reference: want true or false, got string"},
		{"app data bound", "[mcp.servers.a]\ncmd='x'\nmax_app_data_bytes = 0", ""},
		{"app data bound negative", "[mcp.servers.a]\ncmd='x'\nmax_app_data_bytes = -1", "t.toml:3:1: mcp.servers.a.max_app_data_bytes: -1 out of range"},
		{"app data bound type", "[mcp.servers.a]\ncmd='x'\nmax_app_data_bytes = \"8MiB\"", "mcp.servers.a.max_app_data_bytes: want an integer, got string"},
		{"explore bounds", "[explore]\nmax_calls_per_owner = 2\ncall_timeout = \"30s\"", ""},
		{"owner calls zero", "[explore]\nmax_calls_per_owner = 0", "t.toml:2:1: explore.max_calls_per_owner: 0 out of range [1, 100000]"},
		{"owner calls type", "[explore]\nmax_calls_per_owner = \"8\"", "2:1: explore.max_calls_per_owner: want an integer, got string"},
		{"call timeout zero", "[explore]\ncall_timeout = 0", "t.toml:2:1: explore.call_timeout: must be greater than zero"},
		{"call timeout too long", "[explore]\ncall_timeout = \"2h\"", "t.toml:2:1: explore.call_timeout: duration 2h0m0s out of range [0s, 1h0m0s]"},
		{"call timeout bad", "[explore]\ncall_timeout = \"soon\"", "explore.call_timeout: invalid duration \"soon\""},
		{"long server name", "[mcp.servers." + strings.Repeat("a", 65) + "]\ncmd='x'", "longer than 64"},
		{"dot-first server name", "[mcp.servers.\".a\"]\ncmd='x'", "use only"},
		{"long prefix", "[mcp.servers.a]\ncmd='x'\nprefix = \"" + strings.Repeat("p", 65) + "\"", "prefix longer than 64"},
		{"bad port", "[http]\naddr = \"127.0.0.1:99999\"", "invalid port"},
		{"float type for int", "[explore]\ncache_mb = 1.5", "want an integer, got float"},
		{"strings that look like keys", "a = \"\"\"\nx = \\\"\"\" [not] \"\"\n\"\"\"\nb = '''\n[t]'''\n\"c\\u0041\" = 1", "4:1: b: unknown key \"b\" (known keys: memory_dir, agent, mcp, orchestration, pad, memory, explore, http, retention, catalogue, redaction, cluster, telemetry)\nt.toml:6:1: cA: unknown key"},
		{"origin ok", "[http]\naddr = \":0\"\nallowed_origins = [\"http://localhost:3000/\"]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.toml", []byte(tt.src), testEnv(nil))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			case err != nil && !errors.Is(err, ErrInvalid):
				t.Errorf("err %v is not ErrInvalid", err)
			}
		})
	}
}

func TestParseErrorCap(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString("typo")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(" = 1\n")
	}
	_, err := Parse("t.toml", []byte(b.String()), testEnv(nil))
	var es Errors
	if !errors.As(err, &es) || len(es) != maxErrors+1 {
		t.Fatalf("got %T with %d errors, want Errors capped at %d + a summary", err, len(es), maxErrors)
	}
	if es[0].Line != 1 || es[maxErrors-1].Line != maxErrors {
		t.Errorf("errors not in file order: first line %d, last line %d", es[0].Line, es[maxErrors-1].Line)
	}
	if last := es[maxErrors].Error(); last != "t.toml: 30 more problems not shown" {
		t.Errorf("summary = %q", last)
	}
}

func TestPaths(t *testing.T) {
	c, err := Parse("/etc/sp/c.toml", []byte("memory_dir = \"~/m\"\n[pad]\nformat = \"json\"\nschema = \"../schemas/pad.json\"\n"), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.MemoryDir != "/home/u/m" {
		t.Errorf("MemoryDir = %q", c.MemoryDir)
	}
	if c.Pad.Schema != "/etc/schemas/pad.json" {
		t.Errorf("Schema = %q, want resolved against the config's dir", c.Pad.Schema)
	}
	c, err = Parse("/etc/sp/c.toml", []byte("[mcp.servers.a]\ncmd = \"~/bin/srv --x\"\n"), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Servers[0].Cmd; !reflect.DeepEqual(got, []string{"/home/u/bin/srv", "--x"}) {
		t.Errorf("cmd = %q", got)
	}
}

// tomlDecode is toml.Decode, for tests that need the raw document.
func tomlDecode(src string, v any) (toml.MetaData, error) { return toml.Decode(src, v) }

// FuzzParse: no document may panic the loader or its position scanner.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../testdata/config/*/*.toml")
	files = append(files, "../testdata/scratchpad.example.toml")
	for _, fn := range files {
		if data, err := os.ReadFile(fn); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		newScanner(string(data)).document() // without the loader's recover
		c, err := Parse("f.toml", data, testEnv(map[string]string{"HOME": "/h"}))
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c != nil, err)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error not ErrInvalid: %v", err)
		}
	})
}

func BenchmarkLoadExample(b *testing.B) {
	data, err := os.ReadFile("../testdata/scratchpad.example.toml")
	if err != nil {
		b.Fatal(err)
	}
	opts := testEnv(nil)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("scratchpad.example.toml", data, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// The shipped example must load with whatever environment the user has.
func TestLoadExampleRealEnv(t *testing.T) {
	if _, err := Load("../testdata/scratchpad.example.toml"); err != nil {
		t.Fatal(err)
	}
}

func TestPatternErrorUnwrap(t *testing.T) {
	_, err := LoadWith("../testdata/config/invalid/bad_pattern_key.toml", testEnv(nil))
	var pe *PatternError
	if !errors.As(err, &pe) || pe.Pattern != "list_[pods" || pe.Offset != 5 {
		t.Errorf("errors.As(*PatternError) = %+v from %v", pe, err)
	}
}

// [http] tokens_file: its entries join [[http.tokens]]; its problems name
// that file, its key and line; a missing file is an error unless the
// caller (token add) says it may be.
func TestTokensFile(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "c.toml")
	tokPath := filepath.Join(dir, "tokens.toml")
	cfg := "[http]\ntokens_file = \"tokens.toml\"\n\n[[http.tokens]]\nowner = \"alice\"\ntoken = \"{{ env.ALICE_TOKEN }}\"\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testEnv(map[string]string{"ALICE_TOKEN": "alice-secret"})
	_, err := LoadWith(cfgPath, env)
	if err == nil || !strings.Contains(err.Error(), "c.toml:2:1: http.tokens_file: cannot read the tokens file") {
		t.Errorf("missing tokens file: %v", err)
	}
	env.TokensFileMayBeMissing = true
	c, err := LoadWith(cfgPath, env)
	if err != nil || len(c.HTTP.Tokens) != 1 || c.HTTP.TokensFile != tokPath {
		t.Fatalf("missing tokens file allowed: %+v, %v", c, err)
	}
	env.TokensFileMayBeMissing = false
	bobHash := sha256.Sum256([]byte("bob-secret"))
	good := "# added by token add\n[[tokens]]\nowner = \"bob\"\ntoken_sha256 = \"" + hex.EncodeToString(bobHash[:]) + "\"\n"
	if err := os.WriteFile(tokPath, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = LoadWith(cfgPath, env)
	if err != nil {
		t.Fatal(err)
	}
	aliceHash := sha256.Sum256([]byte("alice-secret"))
	if len(c.HTTP.Tokens) != 2 || c.HTTP.Tokens[0] != (Token{"alice", aliceHash}) || c.HTTP.Tokens[1] != (Token{"bob", bobHash}) {
		t.Errorf("tokens: %+v", c.HTTP.Tokens)
	}
	aliceAgain := sha256.Sum256([]byte("alice-secret"))
	bad := good + "\n[[tokens]]\nowner = \"eve\"\ntoken_sha256 = \"" + hex.EncodeToString(aliceAgain[:]) + "\"\n[[tokens]]\nowner = \"x y\"\ntoken_sha256 = \"" + hex.EncodeToString(bobHash[:8]) + "\"\nextra = 1\n"
	if err := os.WriteFile(tokPath, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWith(cfgPath, env)
	want := []string{
		tokPath + ":8:1: tokens[1].token_sha256: same token as http.tokens[0]",
		tokPath + ":10:1: tokens[2].owner: invalid owner \"x y\"",
		tokPath + ":11:1: tokens[2].token_sha256: want 64 hexadecimal digits",
		tokPath + ":12:1: tokens[2].extra: unknown key \"extra\"",
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("errors %v\nlack %q", err, w)
		}
	}
}

func TestClusterSection(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"no url", "[cluster]\nprefix = \"p\"\n", "cluster: redis_url is required in [cluster]"},
		{"bad scheme", "[cluster]\nredis_url = \"http://x:1\"\n", "cluster.redis_url"},
		{"bad prefix", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nprefix = \"a{b}\"\n", "invalid prefix"},
		{"short lease", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nlease = \"1s\"\n", "at least 2s"},
		{"typo", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\ncache_md = 10\n", `did you mean "cache_mb"`},
		{"short state key", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nstate_key = \"short\"\n", "cluster.state_key: at least 32 bytes"},
		{"short previous key", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nstate_key = \"" + strings.Repeat("k", 32) + "\"\nprevious_state_keys = [\"x\"]\n", "cluster.previous_state_keys[0]: at least 32 bytes"},
		{"previous without current", "[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nprevious_state_keys = [\"" + strings.Repeat("k", 32) + "\"]\n", "needs state_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tc.body), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	c, err := Parse("c.toml", []byte("[cluster]\nredis_url = \"redis://127.0.0.1:6379/2\"\nlease = \"45s\"\ncache_mb = 64\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Cluster.Enabled() || c.Cluster.Prefix != "scratchpad-cluster" || c.Cluster.CacheMB != 64 || c.Cluster.Lease.Seconds() != 45 {
		t.Errorf("cluster = %+v", c.Cluster)
	}
	k1, k2 := strings.Repeat("a", 40), strings.Repeat("b", 32)
	c, err = Parse("c.toml", []byte("[cluster]\nredis_url = \"redis://127.0.0.1:6379\"\nstate_key = \""+k1+"\"\nprevious_state_keys = [\""+k2+"\"]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Cluster.StateKey != k1 || len(c.Cluster.PreviousStateKeys) != 1 || c.Cluster.PreviousStateKeys[0] != k2 {
		t.Errorf("state keys = %q %q", c.Cluster.StateKey, c.Cluster.PreviousStateKeys)
	}
	if d := Default(); d.Cluster.Enabled() {
		t.Errorf("default config has replica mode on: %+v", d.Cluster)
	}
}

// TestSkipServersWithUnsetEnv (issue 38 item 6): with the option, a
// server needing an unset variable is left out with the names it lacks
// (once each, its follow-on problems dropped); other problems still fail
// the load, and without the option the unset variable does.
func TestSkipServersWithUnsetEnv(t *testing.T) {
	const servers = `
[mcp.servers.ok]
cmd = ["ok-mcp"]

[mcp.servers.db]
cmd = ["db-mcp", "{{ env.DB_HOST }}"]
env = { DB_URL = "{{ env.DB_URL }}", DB_HOST = "{{ env.DB_HOST }}" }

[mcp.servers.remote]
transport = "http_streamable"
url = "{{ env.REMOTE_URL }}"

[mcp.servers.remote.auth]
type = "oauth"
`
	skip := testEnv(nil)
	skip.SkipServersWithUnsetEnv = true
	for _, tc := range []struct {
		name    string
		src     string
		opts    *Options
		servers []string
		skipped []SkippedServer
		err     string
	}{
		{"skipped", servers, skip, []string{"ok"}, []SkippedServer{
			{Name: "db", MissingEnv: []string{"DB_HOST", "DB_URL"}},
			{Name: "remote", MissingEnv: []string{"REMOTE_URL"}, Auth: true},
		}, ""},
		{"without the option", servers, testEnv(nil), nil, nil, "environment variable DB_HOST is not set"},
		{"another problem still fails", servers + "\n[mcp.servers.ok2]\ncmd = [\"x\"]\ntimout = \"1s\"\n", skip, nil, nil, `unknown key "timout"`},
		{"outside a server it fails", "memory_dir = \"{{ env.MEM }}\"\n" + servers, skip, nil, nil, "environment variable MEM is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.toml", []byte(tc.src), tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				if strings.Contains(tc.err, "not set") && !errors.Is(err, ErrEnvUnset) {
					t.Errorf("%v does not match ErrEnvUnset", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range c.Servers {
				names = append(names, s.Name)
			}
			if !slices.Equal(names, tc.servers) || !reflect.DeepEqual(c.Skipped, tc.skipped) {
				t.Errorf("servers %v skipped %+v, want %v %+v", names, c.Skipped, tc.servers, tc.skipped)
			}
		})
	}
}
