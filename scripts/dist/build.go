package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// buildBinary builds cmd/scratchpad-mcp for t into dir, as make build and
// make release do (static, trimmed paths, version and commit stamped),
// and returns its path.
func buildBinary(o options, t target, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, t.exe())
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s", o.version, o.commit),
		"-o", bin, "./cmd/scratchpad-mcp")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.goos, "GOARCH="+t.goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build for %s: %w\n%s", t, err, out)
	}
	return bin, nil
}

// semverTag is a release tag's version: v1.2.3, v1.2.3-rc.1,
// v1.2.3-4-gabcdef0 (git describe after a tag).
var semverTag = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// npmVersion is the semantic version npm and the bundle's manifest need
// for version: the tag without its v, or, for a build that is not a
// tag's (git describe gives a commit: 51ec564, 51ec564-dirty),
// 0.0.0-dev.g51ec564 (the g keeps an all-digit hash a valid
// prerelease identifier).
func npmVersion(version string) string {
	if semverTag.MatchString(version) {
		return strings.TrimPrefix(version, "v")
	}
	id := regexp.MustCompile(`[^0-9A-Za-z-]+`).ReplaceAllString(version, "-")
	if id == "" {
		id = "unknown"
	}
	return "0.0.0-dev.g" + id
}
