package upstream

import "syscall"

// sysProcAttr puts the upstream in a process group of its own and has the
// kernel SIGKILL it when the proxy dies, even by SIGKILL, which no
// cleanup of ours survives.
//
// Pdeathsig follows the thread that started the process, not the whole
// proxy; Go keeps its threads alive unless a goroutine that locked one
// exits, which this program does not do. It reaches the upstream itself,
// not what the upstream spawned: a grandchild (node under npx) sees its
// stdin close instead, which MCP servers take for the end.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
