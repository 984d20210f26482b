package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// alive reports whether pid runs: it exists and is not a zombie (a
// container's init may not reap the orphans it inherits).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S …: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func parentOf(pid int) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

func stubbornConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`memory_dir = %q

[mcp.servers.stubborn]
cmd = [%q]
env = { %s = "1" }
`, filepath.Join(dir, "mem"), upstreamCmd(), envStubborn)
	p := filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The control: the stubborn upstream really outlives its stdin and a
// SIGTERM, so the next test measures the proxy, not an upstream that
// exits by itself. After both, a SIGUSR1 is answered by the code that
// stays after the input ended: the answer is the event (an exit, or no
// answer, fails), so no wait for nothing is needed.
func TestStubbornUpstreamOutlivesStdin(t *testing.T) {
	cmd := exec.Command(upstreamCmd())
	cmd.Env = append(os.Environ(), envStubborn+"=1")
	in, _ := cmd.StdinPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		defer close(lines) // at its exit
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// Once it ignores SIGTERM (bit 15 of SigIgn) and listens for SIGUSR1
	// (SigCgt), end its input and ask it to stop.
	if !testwait.Until(testwait.Timeout, func() bool {
		return sigMask(cmd.Process.Pid, "SigIgn")&(1<<(syscall.SIGTERM-1)) != 0 && sigMask(cmd.Process.Pid, "SigCgt")&(1<<(syscall.SIGUSR1-1)) != 0
	}) {
		t.Fatal("the upstream never ignored SIGTERM")
	}
	in.Close()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Process.Signal(syscall.SIGUSR1)
	timeout := time.After(testwait.Timeout)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stubborn upstream exited when its stdin closed or on SIGTERM")
			}
			if l == stubbornAlive {
				return
			}
		case <-timeout:
			t.Fatalf("no answer from the stubborn upstream within %s", testwait.Timeout)
		}
	}
}

// SIGKILL the proxy (the real binary): its stdio upstream, which would
// outlive a closed stdin, is gone within 2 s (Linux: Pdeathsig).
func TestUpstreamDiesWithKilledProxy(t *testing.T) {
	cmd := exec.Command(binary(t), "serve", "--config", stubbornConfig(t))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	c := connect(t, &mcp.CommandTransport{Command: cmd})
	defer c.Close()
	waitForTool(t, c, "pid")
	pid, err := strconv.Atoi(strings.TrimSpace(callTool(t, c, "pid", nil)))
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	if pp := parentOf(pid); pp != cmd.Process.Pid {
		t.Fatalf("upstream %d has parent %d, not the proxy %d", pid, pp, cmd.Process.Pid)
	}
	if !alive(pid) {
		t.Fatal("upstream not running")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if !testwait.Until(2*time.Second, func() bool { return !alive(pid) }) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("upstream %d still running 2 s after the proxy was SIGKILLed", pid)
	}
	t.Logf("upstream gone %s after the proxy's SIGKILL", time.Since(killed).Round(time.Millisecond))
}

// sigMask is the signal mask field (SigIgn, SigCgt, …) of pid's
// /proc/{pid}/status, 0 when unreadable.
func sigMask(pid int, field string) uint64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			mask, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return mask
		}
	}
	return 0
}
