package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPBValidatesAndAnswers (issue 58): the bundle of make mcpb for
// this machine, unpacked by the pinned mcpb CLI, has a manifest that
// `mcpb validate` passes; the binary it names is there, executable, and,
// started as a host starts it (its command and args, ${__dirname} and the
// user's choices filled in), answers initialize: with both fields blank,
// left as unfilled placeholders (some hosts do), or set, when the memory
// folder chosen is the one written to.
func TestMCPBValidatesAndAnswers(t *testing.T) {
	needs(t, "node")
	o := hostOptions(t)
	cli, err := mcpbCLI(o.root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := buildMCPB(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || !strings.HasSuffix(files[0], ".mcpb") {
		t.Fatalf("files %v, want a bundle and server.json", files)
	}
	unpacked := t.TempDir()
	mcpb := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("node", append([]string{cli}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mcpb %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	mcpb("unpack", files[0], unpacked)
	if out := mcpb("validate", filepath.Join(unpacked, "manifest.json")); !strings.Contains(out, "Manifest schema validation passes!") {
		t.Fatalf("mcpb validate:\n%s", out)
	}
	var m struct {
		Version string
		Server  struct {
			Type       string
			EntryPoint string `json:"entry_point"`
			MCPConfig  struct {
				Command string
				Args    []string
			} `json:"mcp_config"`
		}
		UserConfig    map[string]struct{ Type string } `json:"user_config"`
		Compatibility struct{ Platforms []string }
	}
	b, err := os.ReadFile(filepath.Join(unpacked, "manifest.json"))
	must(t, err)
	must(t, json.Unmarshal(b, &m))
	if m.Version != "1.2.3-test.4" || m.Server.Type != "binary" || m.UserConfig["config_file"].Type != "file" || m.UserConfig["memory_dir"].Type != "directory" ||
		len(m.Compatibility.Platforms) != 1 || m.Compatibility.Platforms[0] != hostTarget().nodeOS() {
		t.Fatalf("manifest.json:\n%s", b)
	}
	entry := filepath.Join(unpacked, filepath.FromSlash(m.Server.EntryPoint))
	if fi, err := os.Stat(entry); err != nil || hostTarget().goos != "windows" && fi.Mode().Perm()&0o100 == 0 {
		t.Fatalf("entry point %s: %v (mode %v)", m.Server.EntryPoint, err, fi)
	}

	dir := t.TempDir()
	mem := filepath.Join(dir, "chosen-memory")
	cfg := filepath.Join(dir, "scratchpad.toml")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf("memory_dir = %q\n", filepath.Join(dir, "config-memory"))), 0o600))
	for _, tc := range []struct {
		name        string
		config, mem string
	}{
		{"blank", "", ""},
		{"unfilled placeholders", "${user_config.config_file}", "${user_config.memory_dir}"},
		{"chosen", cfg, mem},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fill := strings.NewReplacer("${__dirname}", unpacked, "${user_config.config_file}", tc.config, "${user_config.memory_dir}", tc.mem)
			if tc.name == "unfilled placeholders" {
				fill = strings.NewReplacer("${__dirname}", unpacked)
			}
			args := make([]string, len(m.Server.MCPConfig.Args))
			for i, a := range m.Server.MCPConfig.Args {
				args[i] = fill.Replace(a)
			}
			cmd := exec.Command(fill.Replace(m.Server.MCPConfig.Command), args...)
			cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+filepath.Join(t.TempDir(), "data"))
			s := startMCP(t, cmd)
			s.toolText(t, "append_scratchpad", map[string]any{"note": "bundle test"})
			if tc.name == "chosen" {
				if _, err := os.Stat(mem); err != nil {
					t.Errorf("the chosen memory folder was not written to: %v", err)
				}
				if _, err := os.Stat(filepath.Join(dir, "config-memory")); err == nil {
					t.Error("the config's memory_dir was written to, not the chosen one")
				}
			}
		})
	}
}

// TestServerJSON: the repository's server.json is what the MCP registry
// takes (a name of one slash in reverse DNS, a description of at most 100
// characters, an npm package run over stdio whose package.json's mcpName
// is the name), and dist/server.json adds each bundle with its SHA-256.
func TestServerJSON(t *testing.T) {
	o := hostOptions(t)
	reg, err := readRegistry(o.root)
	must(t, err)
	if !strings.HasPrefix(reg.Name, "io.github.scratchpad-mcp/") || strings.Count(reg.Name, "/") != 1 || len(reg.Description) > 100 {
		t.Errorf("name %q, description of %d characters", reg.Name, len(reg.Description))
	}
	var doc struct {
		Schema   string `json:"$schema"`
		Version  string
		Packages []struct {
			RegistryType, Identifier, Version string
			Transport                         struct{ Type string }
		}
	}
	b, _ := os.ReadFile(filepath.Join(o.root, "server.json"))
	must(t, json.Unmarshal(b, &doc))
	if !strings.HasPrefix(doc.Schema, "https://static.modelcontextprotocol.io/schemas/") || len(doc.Packages) != 1 ||
		doc.Packages[0].RegistryType != "npm" || doc.Packages[0].Identifier != "scratchpad-mcp" || doc.Packages[0].Version != doc.Version || doc.Packages[0].Transport.Type != "stdio" {
		t.Errorf("server.json:\n%s", b)
	}
	bundle := filepath.Join(t.TempDir(), "x.mcpb")
	must(t, os.WriteFile(bundle, []byte("bundle"), 0o644))
	path, err := writeServerJSON(o, reg, []string{bundle}, t.TempDir())
	must(t, err)
	out, _ := os.ReadFile(path)
	sum := sha256.Sum256([]byte("bundle"))
	for _, want := range []string{
		`"version": "1.2.3-test.4"`,
		`"identifier": "https://github.com/scratchpad-mcp/scratchpad-mcp/releases/download/v1.2.3-test.4/x.mcpb"`,
		`"fileSha256": "` + hex.EncodeToString(sum[:]) + `"`,
		`"registryType": "mcpb"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dist/server.json lacks %s:\n%s", want, out)
		}
	}
}
