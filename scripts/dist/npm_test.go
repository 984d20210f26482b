package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNPMPackagesInstallOffline (issue 58): the tarballs of make npm (for
// this machine), installed with npm in an empty folder with no network
// and an empty cache, give a working bin: `scratchpad-mcp version` prints
// the version built, and `scratchpad-mcp serve` answers initialize on
// stdio through the launcher.
func TestNPMPackagesInstallOffline(t *testing.T) {
	needs(t, "npm")
	o := hostOptions(t)
	tarballs, err := buildNPM(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(tarballs) != 2 {
		t.Fatalf("tarballs %v, want the platform package's and scratchpad-mcp's", tarballs)
	}
	app := t.TempDir()
	must(t, os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name":"app","private":true}`), 0o644))
	install := exec.Command("npm", append([]string{"install", "--offline", "--no-audit", "--no-fund", "--cache", filepath.Join(t.TempDir(), "cache")}, tarballs...)...)
	install.Dir = app
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install --offline: %v\n%s", err, out)
	}
	bin := filepath.Join(app, "node_modules", ".bin", "scratchpad-mcp")
	if hostTarget().goos == "windows" {
		bin += ".cmd"
	}
	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "scratchpad-mcp "+testVersion+" (commit abc1234, ") {
		t.Fatalf("scratchpad-mcp version: %v\n%s", err, out)
	}
	// npx finds the installed bin, as `npx -y scratchpad-mcp` does once
	// the packages are published.
	npx := exec.Command("npx", "--offline", "--no-install", "scratchpad-mcp", "version")
	npx.Dir = app
	if out, err := npx.CombinedOutput(); err != nil || !strings.Contains(string(out), testVersion) {
		t.Fatalf("npx scratchpad-mcp version: %v\n%s", err, out)
	}
	s := startMCP(t, exec.Command(bin, "serve", "--memory-dir", filepath.Join(t.TempDir(), "mem")))
	if text := s.toolText(t, "read_scratchpad", map[string]any{}); text == "" {
		t.Error("read_scratchpad answered nothing")
	}
}

// TestNPMPackageJSON: scratchpad-mcp depends, optionally and at its own
// version, on one package per release target, named as the launcher
// names the package of the machine it runs on, whose os and cpu are
// Node's names of that target.
func TestNPMPackageJSON(t *testing.T) {
	reg, err := readRegistry(hostOptions(t).root)
	if err != nil {
		t.Fatal(err)
	}
	main := mainPackageJSON(reg, "1.2.3", releaseTargets)
	opt := main["optionalDependencies"].(map[string]string)
	if len(opt) != len(releaseTargets) || main["mcpName"] != reg.Name || main["bin"].(map[string]string)["scratchpad-mcp"] != "bin/scratchpad-mcp.js" {
		t.Fatalf("package.json of scratchpad-mcp: %v", main)
	}
	want := map[string][2]string{
		"@scratchpad-mcp/linux-x64": {"linux", "x64"}, "@scratchpad-mcp/linux-arm64": {"linux", "arm64"},
		"@scratchpad-mcp/darwin-x64": {"darwin", "x64"}, "@scratchpad-mcp/darwin-arm64": {"darwin", "arm64"},
		"@scratchpad-mcp/win32-x64": {"win32", "x64"}, "@scratchpad-mcp/win32-arm64": {"win32", "arm64"},
	}
	for _, tg := range releaseTargets {
		p := platformPackageJSON(reg, "1.2.3", tg)
		name := p["name"].(string)
		w, ok := want[name]
		if !ok || opt[name] != "1.2.3" {
			t.Errorf("%s: package %s (optional dependency at %q)", tg, name, opt[name])
			continue
		}
		if os, cpu := p["os"].([]string), p["cpu"].([]string); len(os) != 1 || os[0] != w[0] || len(cpu) != 1 || cpu[0] != w[1] {
			t.Errorf("%s: os %v cpu %v, want %v", name, os, cpu, w)
		}
	}
	if !strings.Contains(string(launcher), "`@scratchpad-mcp/${process.platform}-${process.arch}`") {
		t.Error("launcher.js no longer names the package as @scratchpad-mcp/${process.platform}-${process.arch}")
	}
}

func TestNPMVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.2.3":            "1.2.3",
		"v1.2.3-rc.1":       "1.2.3-rc.1",
		"v1.2.3-4-gabcdef0": "1.2.3-4-gabcdef0",
		"1.0.0":             "1.0.0",
		"51ec564":           "0.0.0-dev.g51ec564",
		"0123456-dirty":     "0.0.0-dev.g0123456-dirty",
		"":                  "0.0.0-dev.gunknown",
		"(devel)":           "0.0.0-dev.g-devel-",
		"v01.2.3":           "0.0.0-dev.gv01-2-3",
	} {
		if got := npmVersion(in); got != want {
			t.Errorf("npmVersion(%q) = %q, want %q", in, got, want)
		}
	}
}
