package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestMain lets the test binary double as a real upstream MCP server:
// re-executed with SCRATCHPAD_TESTUPSTREAM=stdio it serves and exits.
func TestMain(m *testing.M) {
	maybeStubborn()
	testupstream.MaybeRun()
	os.Exit(m.Run())
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// binary builds scratchpad-mcp once per test run and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if b := os.Getenv("WIRE_BIN"); b != "" {
			// The wire benchmark's before/after runs: a binary built
			// elsewhere (another commit) against the same upstream.
			binPath = b
			return
		}
		dir, err := os.MkdirTemp("", "scratchpad-mcp-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "scratchpad-mcp")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = err
			binPath = string(out)
		}
	})
	if binErr != nil {
		t.Fatalf("building scratchpad-mcp: %v\n%s", binErr, binPath)
	}
	return binPath
}

// upstreamCmd is the TOML command that starts the test upstream.
func upstreamCmd() string {
	exe, _ := os.Executable()
	return exe
}

// mustRead is the file at p, or the test fails.
func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
