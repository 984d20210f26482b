package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Plain scratchpad-mcp typed at a terminal prints the overview instead of
// waiting silently for an MCP client on stdin.
func TestPlainOnATerminalPrintsOverview(t *testing.T) {
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer ptm.Close()
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skip("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skip("ptsname:", err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR, 0)
	if err != nil {
		t.Skip("open the terminal:", err)
	}
	defer tty.Close()
	var out, errOut bytes.Buffer
	if code := run(nil, tty, &out, &errOut); code != 0 || !strings.Contains(out.String(), "usage: scratchpad-mcp <command>") || !strings.Contains(out.String(), "serve") {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}
