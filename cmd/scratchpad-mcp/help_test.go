package main

import (
	"strings"
	"testing"
)

// Every command's -h says what it does, shows an example and its flags,
// on stdout, and exits 0.
func TestEveryCommandHelp(t *testing.T) {
	for name, cmd := range commands {
		for _, flag := range []string{"-h", "--help"} {
			code, out, errOut := runCLI(t, name, flag)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "scratchpad-mcp "+name+": "+cmd.summary) || !strings.Contains(out, "\nExample:\n  scratchpad-mcp "+name) {
				t.Errorf("%s %s: exit %d\nstdout:\n%s\nstderr:\n%s", name, flag, code, out, errOut)
			}
			if !cmd.noFlags && !strings.Contains(out, "\nFlags:\n") {
				t.Errorf("%s %s lists no flags:\n%s", name, flag, out)
			}
			if strings.Contains(out, "Usage of "+name) {
				t.Errorf("%s %s prints the bare flag heading:\n%s", name, flag, out)
			}
		}
	}
}
