package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags "-X main.version=… -X main.commit=…" by the Makefile.
var (
	version = ""
	commit  = ""
)

func init() {
	commands["version"] = command{summary: "print version, commit and Go version", example: "scratchpad-mcp version", noFlags: true, run: runVersion}
}

// buildInfo returns the version and commit, from -ldflags or, for
// `go install` builds, from the module and VCS data Go embeds.
func buildInfo() (ver, rev string) {
	ver, rev = version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
				if len(rev) > 12 {
					rev = rev[:12]
				}
			}
		}
	}
	if ver == "" {
		ver = "(devel)"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev
}

func versionString() string {
	v, _ := buildInfo()
	return v
}

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	ver, rev := buildInfo()
	fmt.Fprintf(stdout, "scratchpad-mcp %s (commit %s, %s %s/%s)\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return 0
}
