package main

import (
	"fmt"
	"runtime"
	"strings"
)

// target is one system a binary is built for.
type target struct{ goos, goarch string }

// releaseTargets are the systems make release builds for (scripts/release.sh).
var releaseTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// hostTarget is the system this program runs on.
func hostTarget() target { return target{runtime.GOOS, runtime.GOARCH} }

func (t target) String() string { return t.goos + "/" + t.goarch }

// nodeOS is Node's name of the system (process.platform, npm's os field,
// an MCP Bundle's platforms): win32 for windows.
func (t target) nodeOS() string {
	if t.goos == "windows" {
		return "win32"
	}
	return t.goos
}

// nodeCPU is Node's name of the CPU (process.arch, npm's cpu field).
func (t target) nodeCPU() string {
	if t.goarch == "amd64" {
		return "x64"
	}
	return t.goarch
}

// exe is the binary's file name on the target.
func (t target) exe() string {
	if t.goos == "windows" {
		return "scratchpad-mcp.exe"
	}
	return "scratchpad-mcp"
}

// parseTargets reads "linux/amd64,darwin/arm64"; "" is [releaseTargets].
func parseTargets(s string) ([]target, error) {
	if s == "" {
		return releaseTargets, nil
	}
	var out []target
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		t := target{os, arch}
		if !ok || !known(t) {
			return nil, fmt.Errorf("-targets: %q is not one of %s", f, targetList(releaseTargets))
		}
		out = append(out, t)
	}
	return out, nil
}

func known(t target) bool {
	for _, r := range releaseTargets {
		if r == t {
			return true
		}
	}
	return false
}

func targetList(ts []target) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}
