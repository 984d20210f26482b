package proxy

import (
	"os"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestMain lets the test binary double as a real stdio upstream.
func TestMain(m *testing.M) {
	testupstream.MaybeRun()
	os.Exit(m.Run())
}
