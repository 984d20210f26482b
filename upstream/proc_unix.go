//go:build unix

package upstream

import (
	"os/exec"
	"syscall"
)

// procGroup keeps an upstream and what it spawns (npx → node, uv →
// python) in one process group of their own, so stopping the upstream
// signals them all.
type procGroup struct{}

func (procGroup) prepare(cmd *exec.Cmd) { cmd.SysProcAttr = sysProcAttr() }

func (procGroup) started(*exec.Cmd) error { return nil }

// stop signals the whole group: SIGKILL when kill, else SIGTERM.
func (procGroup) stop(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}

func (procGroup) release() {}
