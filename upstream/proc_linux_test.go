package upstream

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// TestStdioUpstreamDiesWithTheProxy: a proxy killed with SIGKILL (no
// cleanup of its own runs) takes its stdio upstream with it, even one
// that does not exit when its stdin closes (Pdeathsig; without it this
// fails).
func TestStdioUpstreamDiesWithTheProxy(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	proxy := exec.Command(os.Args[0], "-test.run=^$")
	proxy.Env = append(os.Environ(), envProxy+"=1", envPIDFile+"="+pidFile)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	defer proxy.Process.Kill()
	var child int
	testwait.For(t, "the upstream to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		child, err = strconv.Atoi(string(b))
		return err == nil
	})
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL) }) // should it outlive a failed test
	if !alive(child) {
		t.Fatalf("upstream %d not running", child)
	}
	if err := proxy.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = proxy.Wait()
	testwait.For(t, fmt.Sprintf("upstream %d to die with the proxy", child), func() bool { return !alive(child) })
}

// alive reports whether pid runs: it exists and is not a zombie waiting
// for a parent (an init that reaps nothing, in a container) to reap it.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
