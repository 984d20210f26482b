//go:build unix && !linux

package upstream

import "syscall"

// sysProcAttr puts the upstream in a process group of its own. These
// systems have no parent-death signal: if the proxy is killed outright,
// the upstream sees its stdin close, which MCP servers take for the end.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
