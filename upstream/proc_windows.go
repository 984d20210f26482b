package upstream

import (
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procGroup keeps an upstream and what it spawns in a job object that
// kills them all when its last handle closes (KILL_ON_JOB_CLOSE). The
// proxy holds that handle, so the upstream dies with the proxy even when
// the proxy is killed outright.
//
// The process joins the job just after it starts: a child it spawns in
// that instant escapes the job (Go's os/exec cannot start a process
// suspended). If the job cannot be made, the upstream runs as a plain
// process and stop kills only it.
type procGroup struct {
	job windows.Handle
}

func (g *procGroup) prepare(*exec.Cmd) {}

func (g *procGroup) started(cmd *exec.Cmd) error {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return err
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(cmd.Process.Pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return err
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return err
	}
	g.job = job
	return nil
}

// stop kills the job (or the process) when kill; Windows has no polite
// signal for a console program without a window, so a soft stop is only
// the stdin close that came before it.
func (g *procGroup) stop(cmd *exec.Cmd, kill bool) {
	if !kill {
		return
	}
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
		return
	}
	_ = cmd.Process.Kill()
}

func (g *procGroup) release() {
	if g.job != 0 {
		_ = windows.CloseHandle(g.job)
		g.job = 0
	}
}
