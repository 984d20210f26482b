package telemetry

import (
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testotlp"
)

// The OTLP receiver of these tests is package testotlp's, shared with the
// binary's tests.
type receiver = testotlp.Receiver

func newReceiver(t *testing.T, block bool) *receiver { return testotlp.New(t, block) }

var (
	attrs   = testotlp.Attrs
	intAttr = testotlp.IntAttr
	hexID   = testotlp.HexID
)
