// Command dist packages scratchpad-mcp where users add MCP servers:
//
//	go run ./scripts/dist npm   # make npm: dist/npm/
//	go run ./scripts/dist mcpb  # make mcpb: dist/mcpb/*.mcpb, dist/server.json
//
// npm (npm.go) writes the package scratchpad-mcp, a launcher
// (launcher.js) whose optional dependencies are one package per platform
// holding its binary, chosen by npm from their os and cpu fields, the way
// esbuild and Biome ship Go and Rust binaries: `npx -y scratchpad-mcp
// serve` installs only the binary of the machine it runs on. Each package
// is packed with `npm pack` into a tarball next to its folder.
//
// mcpb (mcpb.go) writes one MCP Bundle per platform (a bundle's manifest
// can pick a command per operating system, not per CPU), packed by the
// mcpb CLI pinned in this folder's package-lock.json, and dist/server.json
// (registry.go): the repository's server.json for the MCP registry with
// this version and a package per bundle, its SHA-256 included.
//
// Flags: -version (default: git describe, as make build), -commit, -out
// (dist), -targets (GOOS/GOARCH list; default: the six release targets).
// The version the packages carry is a semantic version made from it
// ([npmVersion]).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// options are what every kind of package is built from.
type options struct {
	root    string // the module's root (go.mod's folder)
	out     string // dist/
	version string // as `scratchpad-mcp version` prints it
	commit  string
	targets []target
}

func run(args []string) error {
	if len(args) == 0 || (args[0] != "npm" && args[0] != "mcpb") {
		return fmt.Errorf("usage: dist npm|mcpb [-version V] [-commit C] [-out DIR] [-targets linux/amd64,...]")
	}
	kind := args[0]
	fs := flag.NewFlagSet("dist "+kind, flag.ContinueOnError)
	o := options{}
	var targets string
	fs.StringVar(&o.version, "version", "", "version (default: git describe --tags --always --dirty)")
	fs.StringVar(&o.commit, "commit", "", "commit (default: git rev-parse --short HEAD)")
	fs.StringVar(&o.out, "out", "dist", "output folder")
	fs.StringVar(&targets, "targets", "", "comma-separated GOOS/GOARCH (default: "+targetList(releaseTargets)+")")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.root = root
	if o.version == "" {
		o.version = git(root, "describe", "--tags", "--always", "--dirty")
	}
	if o.commit == "" {
		o.commit = git(root, "rev-parse", "--short", "HEAD")
	}
	if o.targets, err = parseTargets(targets); err != nil {
		return err
	}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(root, o.out)
	}
	switch kind {
	case "npm":
		tgz, err := buildNPM(o)
		for _, t := range tgz {
			fmt.Println(t)
		}
		return err
	default:
		files, err := buildMCPB(o)
		for _, f := range files {
			fmt.Println(f)
		}
		return err
	}
}

// moduleRoot is the folder of the go.mod of the working directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the module (go env GOMOD is empty)")
	}
	return filepath.Dir(mod), nil
}

// git is git's answer in root, "" when it has none (no repository).
func git(root string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
