package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// launcher is the bin of the package scratchpad-mcp.
//
//go:embed launcher.js
var launcher []byte

// npmScope holds the platform packages: @scratchpad-mcp/linux-x64, …
const npmScope = "@scratchpad-mcp"

// buildNPM writes o.out/npm/scratchpad-mcp (the launcher) and one package
// per target holding its binary (o.out/npm/linux-x64, …), packs each
// with npm pack, and returns the tarballs, the platform ones first.
func buildNPM(o options) ([]string, error) {
	reg, err := readRegistry(o.root)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.out, "npm")
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	ver := npmVersion(o.version)
	var tarballs []string
	for _, t := range o.targets {
		pdir := filepath.Join(dir, t.nodeOS()+"-"+t.nodeCPU())
		if _, err := buildBinary(o, t, filepath.Join(pdir, "bin")); err != nil {
			return nil, err
		}
		name := platformPackage(t)
		readme := fmt.Sprintf("# %s\n\nThe `scratchpad-mcp` binary for %s on %s, version %s. Install the package\n[`scratchpad-mcp`](https://www.npmjs.com/package/scratchpad-mcp), which depends on this one.\n", name, t.nodeOS(), t.nodeCPU(), o.version)
		if err := writePackage(o.root, pdir, platformPackageJSON(reg, ver, t), readme); err != nil {
			return nil, err
		}
		tgz, err := npmPack(pdir, dir)
		if err != nil {
			return nil, err
		}
		tarballs = append(tarballs, tgz)
	}
	mdir := filepath.Join(dir, "scratchpad-mcp")
	if err := os.MkdirAll(filepath.Join(mdir, "bin"), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(mdir, "bin", "scratchpad-mcp.js"), launcher, 0o755); err != nil {
		return nil, err
	}
	pj := mainPackageJSON(reg, ver, o.targets)
	readme := "# scratchpad-mcp\n\n" + reg.Description + "\n\n```sh\nnpx -y scratchpad-mcp serve --config ~/scratchpad.toml   # what an MCP client spawns\nnpx -y scratchpad-mcp init --from-claude-desktop PATH   # a config from your client's servers\n```\n\nThis package is a launcher: npm installs the binary of your platform\n(one of the packages " + npmScope + "/{linux,darwin,win32}-{x64,arm64}) with it.\nDocumentation: " + reg.Repository.URL + "\n"
	if err := writePackage(o.root, mdir, pj, readme); err != nil {
		return nil, err
	}
	tgz, err := npmPack(mdir, dir)
	if err != nil {
		return nil, err
	}
	return append(tarballs, tgz), nil
}

// platformPackage is the name of t's package: @scratchpad-mcp/linux-x64,
// … (Node's names, which the launcher builds from process.platform and
// process.arch).
func platformPackage(t target) string { return npmScope + "/" + t.nodeOS() + "-" + t.nodeCPU() }

// platformPackageJSON is the package.json of t's package: npm installs it
// only where os and cpu match.
func platformPackageJSON(reg *registry, ver string, t target) map[string]any {
	return map[string]any{
		"name":        platformPackage(t),
		"version":     ver,
		"description": fmt.Sprintf("The scratchpad-mcp binary for %s %s (installed by the package scratchpad-mcp).", t.nodeOS(), t.nodeCPU()),
		"repository":  reg.repository(),
		"os":          []string{t.nodeOS()},
		"cpu":         []string{t.nodeCPU()},
		"files":       []string{"bin/", "NOTICE"},
		// Yarn PnP: a binary must be on disk to be run.
		"preferUnplugged": true,
	}
}

// mainPackageJSON is the package.json of scratchpad-mcp: the launcher as
// its bin, every target's package as an optional dependency of exactly
// this version (npm skips those whose os or cpu do not match).
func mainPackageJSON(reg *registry, ver string, targets []target) map[string]any {
	optional := map[string]string{}
	for _, t := range targets {
		optional[platformPackage(t)] = ver
	}
	return map[string]any{
		"name":                 "scratchpad-mcp",
		"version":              ver,
		"description":          reg.Description,
		"mcpName":              reg.Name, // the MCP registry checks it against server.json
		"repository":           reg.repository(),
		"homepage":             reg.Repository.URL,
		"keywords":             []string{"mcp", "model-context-protocol", "mcp-server", "proxy"},
		"bin":                  map[string]string{"scratchpad-mcp": "bin/scratchpad-mcp.js"},
		"files":                []string{"bin/", "NOTICE"},
		"engines":              map[string]string{"node": ">=18"},
		"optionalDependencies": optional,
	}
}

// writePackage writes package.json, README.md and the repository's NOTICE
// (the terms of data the binary embeds) into dir.
func writePackage(root, dir string, pj map[string]any, readme string) error {
	b, err := marshal(pj)
	if err != nil {
		return err
	}
	notice, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"package.json": b, "README.md": []byte(readme), "NOTICE": notice} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// npmPack packs the package in dir into dest and returns the tarball's
// path.
func npmPack(dir, dest string) (string, error) {
	cmd := exec.Command("npm", "pack", "--json", "--pack-destination", dest)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npm pack in %s: %w\n%s", dir, err, stderr.String())
	}
	var packed []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return "", fmt.Errorf("npm pack in %s: unexpected answer %q", dir, out)
	}
	return filepath.Join(dest, packed[0].Filename), nil
}

// marshal is v as indented JSON ending in a newline, with <, > and & as
// written (">=18", not "\u003e=18").
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
