package artifacts

import (
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// openRun opens run's store under memoryDir as the agents registry does
// (which validates run ids as identities), refusing what is not one plain
// path element.
func openRun(memoryDir, run string) (*Store, error) {
	if err := checkRunID(run); err != nil {
		return nil, err
	}
	d, err := memdir.In(memoryDir, layout.For(memoryDir, "").Artifacts(run))
	if err != nil {
		return nil, err
	}
	return Open(d)
}

// runOpener is [Env].OpenRun over memoryDir.
func runOpener(memoryDir string) func(string) (*Store, error) {
	return func(run string) (*Store, error) { return openRun(memoryDir, run) }
}

// checkRunID accepts a run id that is one plain path element.
func checkRunID(runID string) error {
	if runID == "" || runID == "." || runID == ".." || strings.ContainsAny(runID, `/\`+"\x00") {
		return fmt.Errorf("artifacts: run id %q: %w", runID, ErrInvalidRunID)
	}
	return nil
}
