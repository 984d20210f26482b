package testupstream

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// EverythingServerPkg is go-sdk v1.8.0's conformance server (a tool in
// go.mod): a real 2026-07-28 server over stateless streamable HTTP (-http
// ADDR) and stdio (no flags), and a 2025-only one over stateful HTTP
// (-stateless=false).
const EverythingServerPkg = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

var everything struct {
	once sync.Once
	path string
	err  error
}

// EverythingServer builds [EverythingServerPkg] once per process (go
// build, from the module the caller runs in) and returns the binary's
// path.
func EverythingServer() (string, error) {
	everything.once.Do(func() {
		dir, err := os.MkdirTemp("", "everything-server")
		if err != nil {
			everything.err = err
			return
		}
		everything.path = filepath.Join(dir, "everything-server")
		if out, err := exec.Command("go", "build", "-o", everything.path, EverythingServerPkg).CombinedOutput(); err != nil {
			everything.err = fmt.Errorf("building %s: %w\n%s", EverythingServerPkg, err, out)
		}
	})
	return everything.path, everything.err
}
